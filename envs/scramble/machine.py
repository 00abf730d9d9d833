"""The virtual machine behind the ScrambleTool terminal: a seeded, JSON-like state.

:class:`Machine` builds the state and is the only thing that writes it: the background
machine (:meth:`Machine.populate`) and the task templates' planted data both go through
its methods, which keep every generated name unique so a planted clue is never shadowed
by a look-alike. The terminal's tools only read the state (see ``terminal.py``).

State containers (all keyed by strings, so the state survives a JSON round trip):

- ``fs``: path -> ``{"kind": "file"|"dir"|"archive", "owner", "group", "mode", "modified",
  "mime", "content"`` (files) ``| "members"`` (archives: name -> text)``}``
- ``mounts``: mount point -> ``{"device", "total", "used"}`` (bytes)
- ``users``: name -> ``{"uid", "groups"}`` (primary group first)
- ``processes``: pid -> ``{"pid", "user", "name", "command"}``
- ``env``: variable -> value; ``cron``: job id -> ``{"schedule", "user", "command"}``
- ``interfaces``: name -> ``{"name", "ipv4", "mac", "status", "mtu"}``
- ``routes``: destination -> ``{"destination", "gateway", "interface", "metric"}``
- ``dns``: domain -> [ip, ...]; ``hosts``: hostname -> ip (the /etc/hosts overrides)
- ``net``: reachable ip -> ``{"latency_ms", "ttl", "reply_from", "ports": {port: service}}``
- ``connections``: id -> ``{"proto", "local", "remote", "state", "pid", "process"}``
- ``web``: url -> page (text or a JSON object)
- ``sysinfo``: category -> dict; ``cpu``, ``shell``: dicts; ``modules``: name -> dict
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

import numpy as np

from sttgym.clock import format_time

__all__ = ["Machine", "encrypt", "decrypt", "b64", "resolve_host", "mount_of", "normalize_path"]

START = datetime(2025, 3, 14, 9, 0)
FIRST_NAMES = ("alice", "bruno", "chen", "dana", "emeka", "farah", "goran", "hana", "ivan", "jun", "kofi",
               "lena", "mateo", "nadia", "omar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "vera")
WORDS = ("amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
         "kestrel", "lumen", "maple", "nimbus", "onyx", "pylon", "quartz", "raven", "sierra", "tundra",
         "umbra", "vortex", "willow", "xenon", "yarrow", "zephyr")
MIME_BY_EXTENSION = {".txt": "text/plain", ".log": "text/plain", ".conf": "text/plain", ".b64": "text/plain",
                     ".enc": "application/octet-stream", ".acl": "text/plain", ".sh": "text/x-shellscript",
                     ".py": "text/x-python", ".json": "application/json", ".yaml": "application/yaml",
                     ".tar.gz": "application/gzip", ".zip": "application/zip", ".png": "image/png",
                     ".pdf": "application/pdf", ".bin": "application/octet-stream"}
ARCHIVE_SUFFIXES = (".tar.gz", ".zip")
_CIPHER_MAGIC = "PLAIN:"


def normalize_path(path: str) -> str:
    """The canonical form of an absolute path (``//etc/../etc/`` -> ``/etc``); other text is kept as is."""
    return posixpath.normpath(path).replace("//", "/") if path.startswith("/") else path


def b64(text: str) -> str:
    """Base64 of UTF-8 text."""
    return base64.b64encode(text.encode()).decode()


def _keystream(key: str, length: int) -> bytes:
    blocks = -(-length // 32)  # joined once: growing a bytes object block by block is quadratic
    return b"".join(hashlib.sha256(f"{key}:{counter}".encode()).digest() for counter in range(blocks))[:length]


def encrypt(plaintext: str, key: str) -> str:
    """Hex ciphertext of ``plaintext`` under ``key`` (a SHA-256 keystream XOR with a known prefix)."""
    data = (_CIPHER_MAGIC + plaintext).encode()
    return bytes(a ^ b for a, b in zip(data, _keystream(key, len(data)))).hex()


def decrypt(ciphertext_hex: str, key: str) -> str | None:
    """The plaintext, or None when the key is wrong or the payload is corrupted (``ValueError`` for non-hex)."""
    data = bytes.fromhex(ciphertext_hex)
    plain = bytes(a ^ b for a, b in zip(data, _keystream(key, len(data))))
    try:
        text = plain.decode()
    except UnicodeDecodeError:
        return None
    return text[len(_CIPHER_MAGIC):] if text.startswith(_CIPHER_MAGIC) else None


def resolve_host(state: dict, host: str) -> str | None:
    """The IP ``host`` stands for: an IP literal, a hosts-file name, then the first DNS record."""
    if host in state["net"] or _is_ip(host):
        return host
    if host in state["hosts"]:
        return state["hosts"][host]
    records = state["dns"].get(host)
    return records[0] if records else None


def mount_of(state: dict, path: str) -> str:
    """The mount point of the volume holding ``path`` (the longest mount point above it)."""
    best = "/"
    for point in state["mounts"]:
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best = point
    return best


def _is_ip(text: str) -> bool:
    parts = text.split(".")
    # ASCII digits only, at most three: str.isdigit also accepts "²", and int() of thousands of digits raises
    return len(parts) == 4 and all(p.isascii() and p.isdigit() and len(p) <= 3 and int(p) <= 255 for p in parts)


class Machine:
    """Writes a machine's state from a seeded generator, keeping generated names unique."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.state: dict[str, Any] = {name: {} for name in (
            "fs", "mounts", "users", "processes", "env", "cron", "interfaces", "routes", "dns", "hosts", "net",
            "connections", "web", "sysinfo", "cpu", "shell", "modules")}
        self._taken: set[str] = set()

    # ------------------------------------------------------------------ draws

    def integer(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high)``."""
        return int(self.rng.integers(low, high))

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options))]

    def unique(self, draw: Callable[[], str]) -> str:
        """A value from ``draw`` that no earlier ``unique`` call returned."""
        while True:
            value = draw()
            if value not in self._taken:
                self._taken.add(value)
                return value

    def token(self, length: int = 6) -> str:
        """A fresh lowercase hex token."""
        return self.unique(lambda: "".join(self.pick("0123456789abcdef") for _ in range(length)))

    def word(self) -> str:
        """A fresh ``<word>-<two digits>`` name."""
        return self.unique(lambda: f"{self.pick(WORDS)}-{self.integer(10, 100)}")

    def ip(self, prefix: str = "10") -> str:
        """A fresh IPv4 address under ``prefix`` (one to three leading octets)."""
        fixed = prefix.split(".")
        return self.unique(lambda: ".".join(fixed + [str(self.integer(1, 255)) for _ in range(4 - len(fixed))]))

    def port(self) -> int:
        return int(self.unique(lambda: str(self.integer(1025, 65000))))

    def timestamp(self) -> str:
        return format_time(START - timedelta(minutes=self.integer(60, 60 * 24 * 90)))

    def text_line(self, words: int = 6) -> str:
        return " ".join(self.pick(WORDS) for _ in range(words))

    # ---------------------------------------------------------------- writers

    def directory(self, path: str, owner: str = "root", mode: str = "rwxr-xr-x") -> str:
        """Create ``path`` and its parents (existing entries are kept)."""
        path = normalize_path(path)
        parent = posixpath.dirname(path)
        if path != "/" and parent not in self.state["fs"]:
            self.directory(parent)
        self.state["fs"].setdefault(path, {"kind": "dir", "owner": owner, "group": self._group_of(owner),
                                           "mode": mode, "modified": self.timestamp(), "mime": "inode/directory"})
        return path

    def file(self, path: str, content: str, owner: str = "root", mode: str = "rw-r--r--",
             mime: str | None = None) -> str:
        """Create or overwrite a text file (its parents are created)."""
        path = normalize_path(path)
        self.directory(posixpath.dirname(path))
        self.state["fs"][path] = {"kind": "file", "owner": owner, "group": self._group_of(owner), "mode": mode,
                                  "modified": self.timestamp(), "mime": mime or _mime_for(path), "content": content}
        return path

    def archive(self, path: str, members: dict[str, str], owner: str = "root") -> str:
        """Create or overwrite an archive of text members."""
        path = normalize_path(path)
        self.directory(posixpath.dirname(path))
        self.state["fs"][path] = {"kind": "archive", "owner": owner, "group": self._group_of(owner),
                                  "mode": "rw-r--r--", "modified": self.timestamp(), "mime": _mime_for(path),
                                  "members": dict(members)}
        return path

    def user(self, name: str, groups: Sequence[str] = ()) -> str:
        """Create ``name`` with its own primary group followed by ``groups``."""
        uid = 1000 + len(self.state["users"])
        self.state["users"][name] = {"uid": uid, "groups": [name, *groups]}
        self.directory(f"/home/{name}", owner=name, mode="rwx------")
        return name

    def new_user(self, groups: Sequence[str] = ()) -> str:
        """A fresh user name, created with ``groups``."""
        return self.user(self.unique(lambda: self.pick(FIRST_NAMES) + str(self.integer(1, 100))), groups)

    def process(self, name: str, user: str, command: str, pid: str | None = None) -> str:
        """Run (or replace, given ``pid``) a process; returns its pid."""
        pid = pid or self.unique(lambda: str(self.integer(300, 40000)))
        self.state["processes"][pid] = {"pid": int(pid), "user": user, "name": name, "command": command}
        return pid

    def host(self, ip: str | None = None, ports: dict[int, str] | None = None, reply_from: str | None = None) -> str:
        """Make ``ip`` (a fresh one by default) reachable, with open ``ports``: port -> service name."""
        ip = ip or self.ip()
        self.state["net"][ip] = {"latency_ms": round(float(self.rng.uniform(0.2, 80.0)), 2),
                                 "ttl": self.pick((54, 57, 60, 63, 64, 128)), "reply_from": reply_from or ip,
                                 "ports": {str(p): s for p, s in (ports or {}).items()}}
        return ip

    def mount(self, point: str, device: str, total: int, used: int) -> str:
        self.directory(point)
        self.state["mounts"][point] = {"device": device, "total": total, "used": used}
        return point

    def _group_of(self, owner: str) -> str:
        user = self.state["users"].get(owner)
        return user["groups"][0] if user else owner

    # ------------------------------------------------------------ background

    def populate(self) -> None:
        """Fill the machine with the ordinary state every episode starts from (no task data)."""
        s, hostname = self.state, f"{self.pick(WORDS)}-{self.integer(1, 40):02d}"
        self.user("root")
        staff = [self.new_user(self.rng.choice(["staff", "devs", "ops", "audio"], 2, replace=False).tolist())
                 for _ in range(self.integer(4, 7))]
        for point, device, size in (("/", "/dev/nvme0n1p2", 512), ("/home", "/dev/nvme0n1p3", 256),
                                    ("/var", "/dev/nvme1n1p1", 128), ("/srv", "/dev/sdb1", 1024)):
            total = size * 2**30
            self.mount(point, device, total, self.integer(total // 10, total * 9 // 10))
        self.file("/etc/hostname", hostname + "\n")
        self.file("/etc/os-release", 'NAME="Ubuntu"\nVERSION_ID="22.04"\n')
        self.file("/var/log/syslog", "\n".join(f"{self.timestamp()} {hostname} {self.text_line()}" for _ in range(8)))
        for who in staff:
            self.file(f"/home/{who}/notes.txt", self.text_line(9) + "\n", owner=who)
            self.file(f"/home/{who}/.bashrc", "export PS1='\\u@\\h:\\w$ '\n", owner=who)
        self.file("/opt/tools/report.py", "print('weekly report')\n", mime="text/x-python")
        self.archive("/var/backups/etc-snapshot.tar.gz", {"hosts": "127.0.0.1 localhost\n", "fstab": "UUID=0 / ext4\n"})
        self.directory("/tmp", mode="rwxrwxrwt")
        s["env"].update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "SHELL": "/bin/bash",
                         "LANG": "en_US.UTF-8", "HOSTNAME": hostname, "TZ": "UTC"})
        for name, user in (("systemd", "root"), ("sshd", "root"), ("cron", "root"), ("nginx", "www-data"),
                           ("rsyslogd", "syslog"), ("bash", self.pick(staff)), ("python3", self.pick(staff))):
            self.process(name, user, f"/usr/sbin/{name}")
        for job in range(self.integer(2, 4)):
            self.state["cron"][f"job-{self.token(4)}"] = {
                "schedule": f"{self.integer(0, 60)} {self.integer(0, 24)} * * *", "user": "root",
                "command": f"/usr/local/bin/{self.pick(('rotate-logs', 'sync-mirror', 'clean-tmp'))}.sh"}
        gateway, local = self.ip("10.0.0"), self.ip("10.0.0")
        s["interfaces"]["lo"] = {"name": "lo", "ipv4": "127.0.0.1", "mac": "00:00:00:00:00:00", "status": "up",
                                 "mtu": 65536}
        s["interfaces"]["eth0"] = {"name": "eth0", "ipv4": local, "mac": self._mac(), "status": "up", "mtu": 1500}
        s["routes"]["default"] = {"destination": "default", "gateway": gateway, "interface": "eth0", "metric": 100}
        s["routes"]["10.0.0.0/24"] = {"destination": "10.0.0.0/24", "gateway": "0.0.0.0", "interface": "eth0",
                                      "metric": 100}
        s["hosts"].update({"localhost": "127.0.0.1", hostname: local})
        self.host("127.0.0.1", {22: "ssh"})
        self.host(local, {22: "ssh", 80: "http"})
        self.host(gateway)
        mirror = self.host(ports={443: "https"})
        s["dns"]["mirror.example.org"] = [mirror]
        s["web"]["http://mirror.example.org/"] = "Index of /mirror"
        s["connections"]["c0"] = {"proto": "tcp", "local": f"{local}:22", "remote": f"{self.ip('192.168')}:51514",
                                  "state": "ESTABLISHED", "pid": 0, "process": "sshd"}
        s["sysinfo"].update({
            "os": {"name": "Ubuntu 22.04.4 LTS", "kernel": f"5.15.0-{self.integer(60, 120)}-generic",
                   "hostname": hostname, "uptime_s": self.integer(10_000, 5_000_000)},
            "hardware": {"vendor": self.pick(("Dell Inc.", "Lenovo", "Supermicro", "HPE")),
                         "product": f"R{self.integer(100, 999)}", "serial": self.token(8).upper()},
            "env": {"variables": len(s["env"]), "locale": "en_US.UTF-8", "timezone": "UTC"},
            "network": {"hostname": hostname, "default_gateway": gateway}})
        cores = self.pick((4, 8, 16, 32))
        s["cpu"].update({"architecture": "x86_64", "model": self.pick(("Intel Xeon Gold 6338", "AMD EPYC 7543",
                                                                       "Intel Core i9-12900K")),
                         "model_id": f"cpu-{self.token(4)}", "cores": cores, "threads": cores * 2,
                         "cache_kb": self.pick((16384, 32768, 49152))})
        s["shell"].update({"shell": "/bin/bash", "version": f"5.{self.integer(0, 3)}.{self.integer(0, 20)}(1)-release",
                           "rows": self.pick((24, 40, 50)), "columns": self.pick((80, 120, 160))})
        for name in ("ext4", "nvme", "e1000e", "snd_hda_intel", "kvm", "bridge"):
            s["modules"][name] = {"name": name, "size": self.integer(16_000, 900_000), "used_by": [],
                                  "signature": "signed"}

    def _mac(self) -> str:
        return ":".join(f"{self.integer(0, 256):02x}" for _ in range(6))


def _mime_for(path: str) -> str:
    for suffix, mime in MIME_BY_EXTENSION.items():
        if path.endswith(suffix):
            return mime
    return "text/plain"
