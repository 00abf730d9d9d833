"""The 20 task templates of the ScrambleToolBench paper (Appendix C).

A template turns a seeded :class:`~sttgym.envs.scramble.machine.Machine` into one task:

- :meth:`Template.place` chooses where the task lives (paths, names, ports) and returns its
  *slots*; the goal text shows some of them, the rest stay hidden in the env.
- :meth:`Template.plant` draws the task's intermediate values (secrets, hostnames, owners,
  tokens) and writes them at those places. An execution window that expires calls it again,
  so every value an agent could have memorised changes while the goal stays true
  (:meth:`Template.regenerate` redraws until the answer itself differs).
- :meth:`Template.truth` computes the answer from the state alone, never from the tools, so
  a test can hold the procedure's result against it.
- :meth:`Template.procedure` is the operator's know-how: a generator that yields
  ``(function, arguments)`` with plaintext names, receives each call's payload, and returns
  the exact string to submit. It reads only the slots the goal shows (:meth:`Template.match`
  recovers them from the goal text), and it calls exactly the template's four ``requires``
  functions, in that order; the first is the task's *trigger command* for execution windows.
"""

from __future__ import annotations

import base64
import posixpath
import re
import string
from typing import Any, ClassVar, Generator

from sttgym.envs.scramble.machine import ARCHIVE_SUFFIXES, WORDS, Machine, b64, decrypt, encrypt, mount_of, \
    resolve_host

__all__ = ["Template", "TEMPLATES", "Procedure", "parse_goal"]

Procedure = Generator[tuple[str, dict], Any, str]
REDRAWS = 20  # a redraw keeps the answer with probability <= 1/4, so twenty always change it in practice


class Template:
    """One procedural task family; see the module docstring for the contract of each method."""

    name: ClassVar[str]
    requires: ClassVar[tuple[str, str, str, str]]  # in call order; requires[0] is the trigger command
    goal: ClassVar[str]  # a format string over the visible slots

    @property
    def trigger(self) -> str:
        return self.requires[0]

    def instantiate(self, m: Machine) -> dict[str, str]:
        """Place and plant one task in ``m``; the slots it returns locate it."""
        slots = self.place(m)
        self.plant(m, slots)
        return slots

    def regenerate(self, m: Machine, slots: dict[str, str]) -> None:
        """Redraw the task's intermediate values until its answer changes (an expired execution window)."""
        before = self.truth(m.state, slots)
        for _ in range(REDRAWS):
            self.plant(m, slots)
            if self.truth(m.state, slots) != before:
                return

    def text(self, slots: dict[str, str]) -> str:
        return self.goal.format(**slots)

    def match(self, text: str) -> dict[str, str] | None:
        """The visible slots of ``text`` if it is one of this template's goals, else None."""
        found = self._pattern().fullmatch(text.strip())
        return found.groupdict() if found else None

    def _pattern(self) -> re.Pattern:
        parts, seen = [], set()
        for literal, field, _, _ in string.Formatter().parse(self.goal):
            parts.append(re.escape(literal))
            if field:
                parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>.+?)")
                seen.add(field)
        return re.compile("".join(parts))

    def place(self, m: Machine) -> dict[str, str]:
        raise NotImplementedError

    def plant(self, m: Machine, slots: dict[str, str]) -> None:
        raise NotImplementedError

    def truth(self, state: dict, slots: dict[str, str]) -> str:
        raise NotImplementedError

    @staticmethod
    def procedure(given: dict[str, str]) -> Procedure:
        raise NotImplementedError


def _lines_with(state: dict, needle: str) -> list[tuple[str, str]]:
    """(path, line) of every file line containing ``needle``, by path."""
    return [(path, line) for path, entry in sorted(state["fs"].items()) if entry["kind"] == "file"
            for line in entry["content"].splitlines() if needle in line]


def _port_of(address: str) -> str:
    return address.rsplit(":", 1)[1]


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


# ------------------------------------------------------------------ templates


class WebServiceAudit(Template):
    name = "web_service_audit"
    requires = ("get_active_connections", "get_env_variable", "check_port_open", "fetch_web_content")
    goal = ("Audit the service on local port {port}: in the active connections, find the database process it "
            "talks to; its internal hostname is in the environment variable <PROCESS>_HOST (the process name in "
            "upper case). Check the connection's remote port on that host to learn its service name, then fetch "
            "http://<hostname>/status/<service name> and submit the 'instance' value it reports.")

    def place(self, m):
        process = m.unique(lambda: m.pick(("postgres", "mysqld", "mongod", "redis")) + str(m.integer(10, 99)))
        return {"port": str(m.port()), "process": process, "conn": f"c-{m.token(4)}",
                "pid": m.process(process, "postgres", f"/usr/bin/{process} -D /var/lib/db")}

    def plant(self, m, slots):
        hostname, remote = f"db-{m.token(4)}.internal", m.port()
        service = f"{slots['process']}-{m.token(4)}"
        m.state["dns"][hostname] = [m.host(m.ip("10.20"), {remote: service})]
        m.state["env"][f"{slots['process'].upper()}_HOST"] = hostname
        local = m.state["interfaces"]["eth0"]["ipv4"]
        m.state["connections"][slots["conn"]] = {
            "proto": "tcp", "local": f"{local}:{slots['port']}", "remote": f"{m.state['dns'][hostname][0]}:{remote}",
            "state": "ESTABLISHED", "pid": int(slots["pid"]), "process": slots["process"]}
        m.state["web"][f"http://{hostname}/status/{service}"] = {"instance": f"inst-{m.token(8)}", "healthy": True}

    def truth(self, state, slots):
        conn = state["connections"][slots["conn"]]
        host = state["env"][conn["process"].upper() + "_HOST"]
        service = state["net"][resolve_host(state, host)]["ports"][_port_of(conn["remote"])]
        return state["web"][f"http://{host}/status/{service}"]["instance"]

    @staticmethod
    def procedure(given):
        connections = yield "get_active_connections", {}
        conn = next(c for c in connections if _port_of(c["local"]) == given["port"])
        host = yield "get_env_variable", {"name": conn["process"].upper() + "_HOST"}
        check = yield "check_port_open", {"host": host, "port": int(_port_of(conn["remote"]))}
        page = yield "fetch_web_content", {"url": f"http://{host}/status/{check['service']}"}
        return page["instance"]


class EncryptedPayload(Template):
    name = "encrypted_payload_retrieval"
    requires = ("list_dir", "read_file", "decode_base64", "decrypt_payload")
    goal = ("An encrypted payload file (its name ends in .enc) was dropped into {directory}. Read it, decode its "
            "Base64 content and decrypt the result with the secret key {key}. Submit the decrypted plaintext.")

    def place(self, m):
        directory = f"/var/spool/{m.word()}"
        for _ in range(m.integer(2, 4)):
            m.file(f"{directory}/{m.word()}{m.pick(('.txt', '.log'))}", m.text_line() + "\n")
        return {"directory": directory, "key": m.token(12), "file": f"{directory}/payload-{m.token(4)}.enc"}

    def plant(self, m, slots):
        m.file(slots["file"], b64(encrypt(f"{m.pick(WORDS)}-{m.token(8)}", slots["key"])))

    def truth(self, state, slots):
        return decrypt(_unb64(state["fs"][slots["file"]]["content"]), slots["key"])

    @staticmethod
    def procedure(given):
        entries = yield "list_dir", {"path": given["directory"]}
        name = next(e for e in entries if e.endswith(".enc"))
        content = yield "read_file", {"file_path": f"{given['directory']}/{name}"}
        ciphertext = yield "decode_base64", {"text": content}
        plaintext = yield "decrypt_payload", {"encrypted_text": ciphertext, "secret_key": given["key"]}
        return plaintext


class ScheduledBackupAudit(Template):
    name = "scheduled_backup_audit"
    requires = ("list_cron_jobs", "read_file", "get_env_variable", "get_file_metadata")
    goal = ("A cron job runs the backup script for '{tag}'. Read that script to find where it writes its log file "
            "(the directory comes from an environment variable), look up that log file's metadata, and submit the "
            "log file's owner.")

    def place(self, m):
        tag, script, var = m.word(), f"/opt/backup/run-{m.token(4)}.sh", f"BACKUP_LOG_DIR_{m.token(4).upper()}"
        m.state["cron"][f"job-{m.token(4)}"] = {"schedule": f"30 {m.integer(0, 6)} * * *", "user": "root",
                                                "command": f"/bin/bash {script} --target {tag}"}
        m.file(script, f'#!/bin/bash\n# nightly backup of {tag}\nLOG_FILE="${{{var}}}/backup-{tag}.log"\n'
                       f'tar czf /backups/{tag}.tgz /srv/{tag} >> "$LOG_FILE" 2>&1\n', mode="rwxr-xr-x")
        return {"tag": tag, "var": var}

    def plant(self, m, slots):
        directory = f"/var/log/{m.word()}"
        m.state["env"][slots["var"]] = directory
        m.file(f"{directory}/backup-{slots['tag']}.log", f"backup of {slots['tag']} finished\n", owner=m.new_user())

    def truth(self, state, slots):
        return state["fs"][f"{state['env'][slots['var']]}/backup-{slots['tag']}.log"]["owner"]

    @staticmethod
    def procedure(given):
        jobs = yield "list_cron_jobs", {}
        job = next(j for j in jobs if j["command"].endswith(f"--target {given['tag']}"))
        script = yield "read_file", {"file_path": next(w for w in job["command"].split() if w.endswith(".sh"))}
        var, log = re.search(r'LOG_FILE="\$\{(\w+)\}/([^"]+)"', script).groups()
        directory = yield "get_env_variable", {"name": var}
        meta = yield "get_file_metadata", {"file_path": f"{directory}/{log}"}
        return meta["owner"]


class HostVerification(Template):
    name = "host_verification_diagnostics"
    requires = ("get_network_interfaces", "dns_resolve", "network_ping", "fetch_web_content")
    goal = ("Verify interface {iface}: resolve {domain}, ping the resolved address to see which address answers, "
            "then fetch http://<answering address>/verify/<IPv4 address of {iface}> and submit the token it returns.")

    def place(self, m):
        return {"iface": m.unique(lambda: f"ens{m.integer(3, 99)}"), "domain": f"monitor-{m.token(4)}.example.net"}

    def plant(self, m, slots):
        address, relay = m.ip("172.16"), m.host(m.ip("10.31"))
        m.state["interfaces"][slots["iface"]] = {"name": slots["iface"], "ipv4": address, "mac": m.token(12),
                                                 "status": "up", "mtu": 1500}
        m.state["dns"][slots["domain"]] = [m.host(m.ip("10.30"), reply_from=relay)]
        m.state["web"][f"http://{relay}/verify/{address}"] = {"token": f"ok-{m.token(8)}"}

    def truth(self, state, slots):
        relay = state["net"][state["dns"][slots["domain"]][0]]["reply_from"]
        return state["web"][f"http://{relay}/verify/{state['interfaces'][slots['iface']]['ipv4']}"]["token"]

    @staticmethod
    def procedure(given):
        interfaces = yield "get_network_interfaces", {}
        address = next(i["ipv4"] for i in interfaces if i["name"] == given["iface"])
        records = yield "dns_resolve", {"domain": given["domain"]}
        ping = yield "network_ping", {"host": records[0]}
        page = yield "fetch_web_content", {"url": f"http://{ping['reply_from']}/verify/{address}"}
        return page["token"]


class SystemFingerprint(Template):
    name = "system_fingerprinting_profile"
    requires = ("get_shell_info", "get_env_variable", "get_file_metadata", "get_system_info")
    goal = ("Build this host's fingerprint '<bash version>/<kernel release>/<value of {var}>/<size in bytes of "
            "{path}>' from the shell information, the environment, the file's metadata and the 'os' system "
            "information, and submit it.")

    def place(self, m):
        return {"var": f"HOST_ROLE_{m.token(4).upper()}", "path": f"/etc/fingerprint/{m.word()}.conf"}

    def plant(self, m, slots):
        m.state["env"][slots["var"]] = m.word()
        m.file(slots["path"], m.text_line(m.integer(3, 12)) + "\n")

    def truth(self, state, slots):
        size = len(state["fs"][slots["path"]]["content"].encode())
        return f"{state['shell']['version']}/{state['sysinfo']['os']['kernel']}/{state['env'][slots['var']]}/{size}"

    @staticmethod
    def procedure(given):
        shell = yield "get_shell_info", {}
        value = yield "get_env_variable", {"name": given["var"]}
        meta = yield "get_file_metadata", {"file_path": given["path"]}
        system = yield "get_system_info", {"category": "os"}
        return f"{shell['version']}/{system['kernel']}/{value}/{meta['size']}"


class ArchiveForensic(Template):
    name = "archive_forensic_audit"
    requires = ("list_dir", "list_archive_contents", "read_file_from_archive", "decode_base64")
    goal = ("A forensic archive was collected in {directory}. Find the archive there, find the evidence file inside "
            "it (its name starts with 'evidence-'), read it and decode its Base64 content. Submit the decoded text.")

    def place(self, m):
        directory = f"/srv/forensics/{m.word()}"
        m.file(f"{directory}/chain-of-custody.txt", m.text_line() + "\n")
        return {"directory": directory, "archive": f"{directory}/case-{m.token(4)}.tar.gz",
                "member": f"evidence-{m.token(4)}.b64"}

    def plant(self, m, slots):
        m.archive(slots["archive"], {slots["member"]: b64(f"{m.pick(WORDS)} {m.token(8)}"),
                                     "readme.txt": m.text_line() + "\n", "hashes.txt": m.token(16) + "\n"})

    def truth(self, state, slots):
        return _unb64(state["fs"][slots["archive"]]["members"][slots["member"]])

    @staticmethod
    def procedure(given):
        entries = yield "list_dir", {"path": given["directory"]}
        archive = f"{given['directory']}/{next(e for e in entries if e.endswith(ARCHIVE_SUFFIXES))}"
        members = yield "list_archive_contents", {"archive_path": archive}
        name = next(x["name"] for x in members if x["name"].startswith("evidence-"))
        text = yield "read_file_from_archive", {"archive_path": archive, "file_name": name}
        decoded = yield "decode_base64", {"text": text}
        return decoded


class DriverIntegrity(Template):
    name = "driver_integrity"
    requires = ("list_kernel_modules", "search_text", "get_file_metadata", "get_user_groups")
    goal = ("One loaded kernel module has an unsigned signature. Search the filesystem for its name to find the "
            "whitelist file that lists it, check who owns that file, and submit that user's groups, comma-separated "
            "in the order listed.")

    def place(self, m):
        module = f"{m.pick(('vfio', 'zram', 'xt', 'hid'))}_{m.token(4)}"
        m.state["modules"][module] = {"name": module, "size": m.integer(8_000, 90_000), "used_by": [],
                                      "signature": "unsigned"}
        return {"whitelist": f"/etc/modprobe.d/whitelist-{m.token(4)}.conf", "module": module}

    def plant(self, m, slots):
        owner = m.new_user(m.rng.choice(["wheel", "kmod", "audit", "devs"], m.integer(1, 3), replace=False).tolist())
        m.file(slots["whitelist"], "# approved kernel modules\n" + "\n".join(sorted([slots["module"], "ext4", "nvme"]))
               + "\n", owner=owner)

    def truth(self, state, slots):
        (module,) = [name for name, mod in state["modules"].items() if mod["signature"] == "unsigned"]
        (path, _), = _lines_with(state, module)
        return ",".join(state["users"][state["fs"][path]["owner"]]["groups"])

    @staticmethod
    def procedure(given):
        modules = yield "list_kernel_modules", {}
        hits = yield "search_text", {"query": next(x["name"] for x in modules if x["signature"] == "unsigned")}
        meta = yield "get_file_metadata", {"file_path": hits[0]["path"]}
        groups = yield "get_user_groups", {"username": meta["owner"]}
        return ",".join(groups)


class ProcessSshKey(Template):
    name = "process_ssh_key_inspection"
    requires = ("list_running_processes", "get_user_groups", "read_file", "decode_base64")
    goal = ("An SSH agent (process 'ssh-agent') is running. Find the user it runs as and that user's keyring group "
            "(the group whose name starts with 'kr-'), read the key stored at /srv/keyring/<group>/<user>.b64 and "
            "decode its Base64 content. Submit the key.")

    def place(self, m):
        return {"pid": m.process("ssh-agent", "root", "ssh-agent -s")}

    def plant(self, m, slots):
        keyring = f"kr-{m.token(4)}"
        user = m.new_user(["staff", keyring])
        m.process("ssh-agent", user, "ssh-agent -s", pid=slots["pid"])
        m.file(f"/srv/keyring/{keyring}/{user}.b64", b64(f"ssh-ed25519 AAAA{m.token(24)} {user}"), owner=user,
               mode="rw-------")

    def truth(self, state, slots):
        user = state["processes"][slots["pid"]]["user"]
        keyring = next(g for g in state["users"][user]["groups"] if g.startswith("kr-"))
        return _unb64(state["fs"][f"/srv/keyring/{keyring}/{user}.b64"]["content"])

    @staticmethod
    def procedure(given):
        processes = yield "list_running_processes", {}
        user = next(p["user"] for p in processes if p["name"] == "ssh-agent")
        groups = yield "get_user_groups", {"username": user}
        keyring = next(g for g in groups if g.startswith("kr-"))
        text = yield "read_file", {"file_path": f"/srv/keyring/{keyring}/{user}.b64"}
        key = yield "decode_base64", {"text": text}
        return key


class NetworkRouteInterface(Template):
    name = "network_route_interface_mapping"
    requires = ("get_routing_table", "search_text", "read_file", "get_env_variable")
    goal = ("Find the interface that routes traffic to {destination}, find its configuration file (search for "
            "'device=<interface>'), read it, and look up the environment variable named on its 'label=$...' line. "
            "Submit that variable's value.")

    def place(self, m):
        iface, var = m.unique(lambda: f"wg{m.integer(0, 99)}"), f"NETLABEL_{m.token(4).upper()}"
        destination = m.unique(lambda: f"10.{m.integer(100, 250)}.0.0/16")
        m.file(f"/etc/network/conf.d/{m.word()}.conf", f"# tunnel configuration\ndevice={iface}\nmtu=1420\n"
                                                       f"label=${var}\n")
        m.state["interfaces"][iface] = {"name": iface, "ipv4": m.ip("10.99"), "mac": m.token(12), "status": "up",
                                        "mtu": 1420}
        return {"destination": destination, "iface": iface, "var": var}

    def plant(self, m, slots):
        m.state["routes"][slots["destination"]] = {"destination": slots["destination"], "gateway": m.ip("10.0.0"),
                                                   "interface": slots["iface"], "metric": m.integer(10, 90)}
        m.state["env"][slots["var"]] = f"{m.pick(WORDS)}-link-{m.token(4)}"

    def truth(self, state, slots):
        (path, _), = _lines_with(state, f"device={state['routes'][slots['destination']]['interface']}")
        var = re.search(r"^label=\$(\w+)", state["fs"][path]["content"], re.M).group(1)
        return state["env"][var]

    @staticmethod
    def procedure(given):
        routes = yield "get_routing_table", {}
        iface = next(r["interface"] for r in routes if r["destination"] == given["destination"])
        hits = yield "search_text", {"query": f"device={iface}"}
        text = yield "read_file", {"file_path": hits[0]["path"]}
        value = yield "get_env_variable", {"name": re.search(r"^label=\$(\w+)", text, re.M).group(1)}
        return value


class KernelModuleForensic(Template):
    name = "kernel_module_forensic"
    requires = ("list_kernel_modules", "search_text", "read_file", "get_file_type")
    goal = ("A loaded kernel module is used by '{consumer}'. Search for the module's name to find its configuration "
            "file, read the firmware path it names ('firmware=...'), and submit that firmware file's MIME type.")

    def place(self, m):
        module, consumer = f"{m.pick(('iwl', 'btusb', 'dvb', 'snd'))}_{m.token(4)}", m.word()
        m.state["modules"][module] = {"name": module, "size": m.integer(8_000, 90_000), "used_by": [consumer],
                                      "signature": "signed"}
        return {"consumer": consumer, "module": module, "conf": f"/etc/modprobe.d/{m.word()}.conf"}

    def plant(self, m, slots):
        firmware = m.file(f"/lib/firmware/{m.word()}.img", m.token(32), mime=m.pick((
            "application/octet-stream", "application/x-elf", "application/x-sharedlib", "application/gzip")))
        m.file(slots["conf"], f"options {slots['module']} debug=0\nfirmware={firmware}\n")

    def truth(self, state, slots):
        module = next(name for name, mod in state["modules"].items() if slots["consumer"] in mod["used_by"])
        (path, _), = _lines_with(state, module)
        firmware = re.search(r"^firmware=(\S+)", state["fs"][path]["content"], re.M).group(1)
        return state["fs"][firmware]["mime"]

    @staticmethod
    def procedure(given):
        modules = yield "list_kernel_modules", {}
        hits = yield "search_text", {"query": next(x["name"] for x in modules if given["consumer"] in x["used_by"])}
        text = yield "read_file", {"file_path": hits[0]["path"]}
        mime = yield "get_file_type", {"file_path": re.search(r"^firmware=(\S+)", text, re.M).group(1)}
        return mime


class AutomatedJobStorage(Template):
    name = "automated_job_storage"
    requires = ("list_cron_jobs", "read_file", "list_dir", "get_disk_usage")
    goal = ("The cron job tagged '{tag}' writes batches under the output directory named in its script "
            "(OUTPUT_ROOT=...). Find the newest batch there (the 'batch-' entry that sorts last) and submit the used "
            "bytes of the volume it is mounted on.")

    def place(self, m):
        tag, script, root = m.word(), f"/opt/jobs/{m.word()}.sh", f"/srv/out-{m.token(4)}"
        m.state["cron"][f"job-{m.token(4)}"] = {"schedule": "*/15 * * * *", "user": "root",
                                                "command": f"{script} --tag {tag}"}
        m.file(script, f"#!/bin/bash\n# export job {tag}\nOUTPUT_ROOT={root}\n"
                       'dest=$(ls -d "$OUTPUT_ROOT"/batch-* | sort | tail -1)\nexport-data --to "$dest"\n',
               mode="rwxr-xr-x")
        m.file(f"{root}/manifest.txt", m.text_line() + "\n")
        batches = [f"batch-2025{m.integer(1, 13):02d}{m.integer(1, 29):02d}-{m.token(3)}" for _ in range(3)]
        return {"tag": tag, "root": root, "batches": ",".join(batches)}

    def plant(self, m, slots):
        for batch in slots["batches"].split(","):
            total = m.pick((64, 128, 256)) * 2**30
            m.mount(f"{slots['root']}/{batch}", f"/dev/sd{m.pick('cdefg')}{m.integer(1, 9)}", total,
                    m.integer(total // 20, total))

    def truth(self, state, slots):
        newest = max(p for p in state["fs"] if posixpath.dirname(p) == slots["root"]
                     and posixpath.basename(p).startswith("batch-"))
        return str(state["mounts"][newest]["used"])

    @staticmethod
    def procedure(given):
        jobs = yield "list_cron_jobs", {}
        job = next(j for j in jobs if j["command"].endswith(f"--tag {given['tag']}"))
        script = yield "read_file", {"file_path": job["command"].split()[0]}
        root = re.search(r"^OUTPUT_ROOT=(\S+)", script, re.M).group(1)
        entries = yield "list_dir", {"path": root}
        newest = max(e.rstrip("/") for e in entries if e.startswith("batch-"))
        usage = yield "get_disk_usage", {"path": f"{root}/{newest}"}
        return str(usage["used"])


class HostnameAccess(Template):
    name = "hostname_access_diagnostics"
    requires = ("get_etc_hosts", "network_ping", "get_file_metadata", "get_user_groups")
    goal = ("Look up host {hostname} in the hosts file and ping its address. Access lists are named after the "
            "address that actually answers: check the metadata of /var/lib/access/<answering address>.acl and "
            "submit the groups of its owner, comma-separated in the order listed.")

    def place(self, m):
        return {"hostname": f"{m.word()}.corp"}

    def plant(self, m, slots):
        relay = m.host(m.ip("10.51"))
        m.state["hosts"][slots["hostname"]] = m.host(m.ip("10.50"), reply_from=relay)
        owner = m.new_user(m.rng.choice(["netops", "wheel", "audit", "vpn"], m.integer(1, 3), replace=False).tolist())
        m.file(f"/var/lib/access/{relay}.acl", "allow all\n", owner=owner)

    def truth(self, state, slots):
        relay = state["net"][state["hosts"][slots["hostname"]]]["reply_from"]
        return ",".join(state["users"][state["fs"][f"/var/lib/access/{relay}.acl"]["owner"]]["groups"])

    @staticmethod
    def procedure(given):
        hosts = yield "get_etc_hosts", {}
        ping = yield "network_ping", {"host": next(h["ip"] for h in hosts if h["hostname"] == given["hostname"])}
        meta = yield "get_file_metadata", {"file_path": f"/var/lib/access/{ping['reply_from']}.acl"}
        groups = yield "get_user_groups", {"username": meta["owner"]}
        return ",".join(groups)


class CpuCapability(Template):
    name = "cpu_capability_system"
    requires = ("get_cpu_info", "get_system_info", "dns_resolve", "fetch_web_content")
    goal = ("Verify this CPU's capabilities: the 'hardware' system information names a capability service; resolve "
            "it and fetch http://<resolved address>/cpu/<CPU model id>. Submit the verdict it returns.")

    def place(self, m):
        service = f"caps-{m.token(4)}.vendor.example"
        m.state["sysinfo"]["hardware"]["capability_service"] = service
        return {"service": service}

    def plant(self, m, slots):
        address = m.host(m.ip("10.60"), {80: "http"})
        m.state["dns"][slots["service"]] = [address]
        m.state["web"][f"http://{address}/cpu/{m.state['cpu']['model_id']}"] = {"verdict": f"CAP-{m.token(6).upper()}"}

    def truth(self, state, slots):
        return state["web"][f"http://{state['dns'][slots['service']][0]}/cpu/{state['cpu']['model_id']}"]["verdict"]

    @staticmethod
    def procedure(given):
        cpu = yield "get_cpu_info", {}
        hardware = yield "get_system_info", {"category": "hardware"}
        records = yield "dns_resolve", {"domain": hardware["capability_service"]}
        page = yield "fetch_web_content", {"url": f"http://{records[0]}/cpu/{cpu['model_id']}"}
        return page["verdict"]


class DnsFirewallVerification(Template):
    name = "dns_firewall_verification"
    requires = ("dns_resolve", "get_system_info", "check_port_open", "fetch_web_content")
    goal = ("Resolve {domain}, then query the system information database with the resolved address as the category "
            "to find its firewall port. Check that port on that address to learn its service name, fetch "
            "http://<address>:<port>/<service name> and submit the token it returns.")

    def place(self, m):
        return {"domain": f"fw-{m.token(4)}.internal"}

    def plant(self, m, slots):
        port, service = m.port(), f"{m.pick(('gate', 'shield', 'ward'))}-{m.token(4)}"
        address = m.host(m.ip("10.70"), {port: service})
        m.state["dns"][slots["domain"]] = [address]
        m.state["sysinfo"][address] = {"firewall_port": port, "zone": "internal"}
        m.state["web"][f"http://{address}:{port}/{service}"] = {"token": f"fw-{m.token(8)}"}

    def truth(self, state, slots):
        address = state["dns"][slots["domain"]][0]
        port = state["sysinfo"][address]["firewall_port"]
        return state["web"][f"http://{address}:{port}/{state['net'][address]['ports'][str(port)]}"]["token"]

    @staticmethod
    def procedure(given):
        records = yield "dns_resolve", {"domain": given["domain"]}
        firewall = yield "get_system_info", {"category": records[0]}
        check = yield "check_port_open", {"host": records[0], "port": int(firewall["firewall_port"])}
        page = yield "fetch_web_content", {"url": f"http://{records[0]}:{check['port']}/{check['service']}"}
        return page["token"]


class CompressedLogs(Template):
    name = "compressed_logs"
    requires = ("list_dir", "list_archive_contents", "read_file_from_archive", "encode_base64")
    goal = ("Log archives are kept in {directory}. Find the archive there, open the log file inside it whose name "
            "starts with 'error-', take its single line starting with 'ERROR', and submit that whole line "
            "Base64-encoded.")

    def place(self, m):
        directory = f"/var/log/archive/{m.word()}"
        m.file(f"{directory}/rotation.txt", m.text_line() + "\n")
        return {"directory": directory, "archive": f"{directory}/logs-{m.token(4)}.zip",
                "member": f"error-{m.token(4)}.log"}

    def plant(self, m, slots):
        error = f"ERROR {m.integer(100, 999)}: {m.text_line(4)} ({m.token(4)})"
        m.archive(slots["archive"], {
            slots["member"]: f"INFO {m.text_line(3)}\n{error}\nWARN {m.text_line(3)}\n",
            f"access-{m.token(4)}.log": f"INFO {m.text_line(5)}\n", f"debug-{m.token(4)}.log": "DEBUG ok\n"})

    def truth(self, state, slots):
        text = state["fs"][slots["archive"]]["members"][slots["member"]]
        return b64(next(line for line in text.splitlines() if line.startswith("ERROR")))

    @staticmethod
    def procedure(given):
        entries = yield "list_dir", {"path": given["directory"]}
        archive = f"{given['directory']}/{next(e for e in entries if e.endswith(ARCHIVE_SUFFIXES))}"
        members = yield "list_archive_contents", {"archive_path": archive}
        name = next(x["name"] for x in members if x["name"].startswith("error-"))
        text = yield "read_file_from_archive", {"archive_path": archive, "file_name": name}
        encoded = yield "encode_base64", {"text": next(line for line in text.splitlines() if line.startswith("ERROR"))}
        return encoded


class CryptoHandshake(Template):
    name = "cryptographic_handshake"
    requires = ("encode_base64", "fetch_web_content", "decode_base64", "decrypt_payload")
    goal = ("Perform a handshake with {host}: Base64-encode the client id {client}, fetch "
            "http://{host}/handshake/<encoded id>, Base64-decode the 'payload' field of the response and decrypt it "
            "with the session key {key}. Submit the plaintext.")

    def place(self, m):
        host = f"auth-{m.token(4)}.example.com"
        m.state["dns"][host] = [m.host(m.ip("10.90"), {80: "http"})]
        return {"host": host, "client": f"client-{m.token(6)}", "key": m.token(12)}

    def plant(self, m, slots):
        m.state["web"][f"http://{slots['host']}/handshake/{b64(slots['client'])}"] = {
            "payload": b64(encrypt(f"session-{m.token(10)}", slots["key"])), "expires_in": 300}

    def truth(self, state, slots):
        page = state["web"][f"http://{slots['host']}/handshake/{b64(slots['client'])}"]
        return decrypt(_unb64(page["payload"]), slots["key"])

    @staticmethod
    def procedure(given):
        encoded = yield "encode_base64", {"text": given["client"]}
        page = yield "fetch_web_content", {"url": f"http://{given['host']}/handshake/{encoded}"}
        ciphertext = yield "decode_base64", {"text": page["payload"]}
        plaintext = yield "decrypt_payload", {"encrypted_text": ciphertext, "secret_key": given["key"]}
        return plaintext


class UserProcessAccess(Template):
    name = "user_process_access"
    requires = ("list_running_processes", "get_user_groups", "search_text", "read_file")
    goal = ("The protected process '{process}' is running. Find the user it runs as and that user's groups, then "
            "search for the policy file containing 'protect: {process}' and read it. Submit the one group of that "
            "user that the policy allows.")

    def place(self, m):
        process = f"{m.pick(('vaultd', 'keymgr', 'licsrv', 'hsm-proxy'))}-{m.token(4)}"
        return {"process": process, "policy": f"/etc/security/policies/{m.word()}.policy",
                "pid": m.process(process, "root", f"/usr/bin/{process} --protected")}

    def plant(self, m, slots):
        allowed, denied, other = (f"grp-{m.token(4)}" for _ in range(3))
        member_of = m.rng.permutation([allowed, denied, "staff"]).tolist()
        user = m.new_user(member_of)
        m.process(slots["process"], user, f"/usr/bin/{slots['process']} --protected", pid=slots["pid"])
        rules = m.rng.permutation([f"allow: {allowed}", f"allow: {other}", f"deny: {denied}", "deny: staff"]).tolist()
        m.file(slots["policy"], f"protect: {slots['process']}\n" + "\n".join(rules) + "\n")

    def truth(self, state, slots):
        user = state["processes"][slots["pid"]]["user"]
        (path, _), = _lines_with(state, f"protect: {slots['process']}")
        allowed = re.findall(r"^allow: (\S+)", state["fs"][path]["content"], re.M)
        return next(g for g in state["users"][user]["groups"] if g in allowed)

    @staticmethod
    def procedure(given):
        processes = yield "list_running_processes", {}
        groups = yield "get_user_groups", {"username": next(p["user"] for p in processes
                                                            if p["name"] == given["process"])}
        hits = yield "search_text", {"query": f"protect: {given['process']}"}
        policy = yield "read_file", {"file_path": hits[0]["path"]}
        allowed = re.findall(r"^allow: (\S+)", policy, re.M)
        return next(g for g in groups if g in allowed)


class FileTypeSecurity(Template):
    name = "file_type_security_audit"
    requires = ("get_env_variable", "get_file_type", "get_file_permissions", "get_disk_usage")
    goal = ("The environment variable {var} points at an uploaded file. Audit it and submit "
            "'<MIME type>;<permission string>;<mount point of its volume>', for example 'text/plain;rw-r--r--;/srv'.")

    def place(self, m):
        volumes = [m.mount(f"/srv/uploads/vol-{m.token(3)}", f"/dev/sdh{i}", 2**36, m.integer(2**30, 2**35))
                   for i in (1, 2)]
        return {"var": f"UPLOAD_PATH_{m.token(4).upper()}", "volumes": ",".join(volumes)}

    def plant(self, m, slots):
        path = m.file(f"{m.pick(slots['volumes'].split(','))}/{m.word()}/{m.token(6)}", m.token(40),
                      mode=m.pick(("rw-r--r--", "rw-------", "rwxr-xr-x", "rw-rw-rw-")),
                      mime=m.pick(("image/png", "application/pdf", "application/zip", "text/x-shellscript")))
        m.state["env"][slots["var"]] = path

    def truth(self, state, slots):
        path = state["env"][slots["var"]]
        return f"{state['fs'][path]['mime']};{state['fs'][path]['mode']};{mount_of(state, path)}"

    @staticmethod
    def procedure(given):
        path = yield "get_env_variable", {"name": given["var"]}
        mime = yield "get_file_type", {"file_path": path}
        permissions = yield "get_file_permissions", {"file_path": path}
        usage = yield "get_disk_usage", {"path": path}
        return f"{mime};{permissions['mode']};{usage['mount']}"


class HardwareSpecsShell(Template):
    name = "hardware_specs_shell"
    requires = ("get_env_variable", "get_user_groups", "get_system_info", "read_file")
    goal = ("The environment variable {var} names the audited user. Find that user's hardware group (its name starts "
            "with 'hw-') and submit the content of /var/audit/<hardware serial number>/<group>.txt; the serial number "
            "is in the 'hardware' system information.")

    def place(self, m):
        return {"var": f"AUDIT_USER_{m.token(4).upper()}"}

    def plant(self, m, slots):
        group = f"hw-{m.token(4)}"
        m.state["env"][slots["var"]] = m.new_user(["staff", group])
        m.file(f"/var/audit/{m.state['sysinfo']['hardware']['serial']}/{group}.txt", f"audit-{m.token(10)}")

    def truth(self, state, slots):
        group = next(g for g in state["users"][state["env"][slots["var"]]]["groups"] if g.startswith("hw-"))
        return state["fs"][f"/var/audit/{state['sysinfo']['hardware']['serial']}/{group}.txt"]["content"]

    @staticmethod
    def procedure(given):
        user = yield "get_env_variable", {"name": given["var"]}
        groups = yield "get_user_groups", {"username": user}
        hardware = yield "get_system_info", {"category": "hardware"}
        group = next(g for g in groups if g.startswith("hw-"))
        content = yield "read_file", {"file_path": f"/var/audit/{hardware['serial']}/{group}.txt"}
        return content


class DnsFirewallRouting(Template):
    name = "dns_firewall_routing"
    requires = ("get_env_variable", "dns_resolve", "network_ping", "check_port_open")
    goal = ("The environment variable {var} names a routing endpoint. Resolve it, ping the resolved address to find "
            "the gateway that answers, check port {port} on that gateway and submit the service name it reports.")

    def place(self, m):
        return {"var": f"ROUTE_ENDPOINT_{m.token(4).upper()}", "port": str(m.port())}

    def plant(self, m, slots):
        domain = f"edge-{m.token(5)}.example.net"
        gateway = m.host(m.ip("10.81"), {int(slots["port"]): f"route-{m.token(4)}"})
        m.state["dns"][domain] = [m.host(m.ip("10.80"), reply_from=gateway)]
        m.state["env"][slots["var"]] = domain

    def truth(self, state, slots):
        gateway = state["net"][state["dns"][state["env"][slots["var"]]][0]]["reply_from"]
        return state["net"][gateway]["ports"][slots["port"]]

    @staticmethod
    def procedure(given):
        domain = yield "get_env_variable", {"name": given["var"]}
        records = yield "dns_resolve", {"domain": domain}
        ping = yield "network_ping", {"host": records[0]}
        check = yield "check_port_open", {"host": ping["reply_from"], "port": int(given["port"])}
        return check["service"]


TEMPLATES: dict[str, Template] = {t.name: t for t in (
    WebServiceAudit(), EncryptedPayload(), ScheduledBackupAudit(), HostVerification(), SystemFingerprint(),
    ArchiveForensic(), DriverIntegrity(), ProcessSshKey(), NetworkRouteInterface(), KernelModuleForensic(),
    AutomatedJobStorage(), HostnameAccess(), CpuCapability(), DnsFirewallVerification(), CompressedLogs(),
    CryptoHandshake(), UserProcessAccess(), FileTypeSecurity(), HardwareSpecsShell(), DnsFirewallRouting())}


def parse_goal(text: str) -> tuple[Template, dict[str, str]] | None:
    """The template a goal text belongs to and the slots it shows, or None for an unknown goal."""
    for template in TEMPLATES.values():
        given = template.match(text)
        if given is not None:
            return template, given
    return None
