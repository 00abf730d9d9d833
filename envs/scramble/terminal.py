"""The terminal: the 28 functions of the ScrambleToolBench paper (Appendix B) over a :class:`Machine` state.

Every function only reads the state; what changes the machine is the curriculum (tasks
planting their data, execution windows regenerating it), never a call. Each returns one
payload (``ok(value)``) or a plaintext application-level error (``fail(...)``) whose wording
is the function's own ("File not found: ...", "Host unreachable: ...") and quotes the value
it rejects, as a real tool would.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from urllib.parse import urlsplit

from sttgym.tools import fail, ok, tool, tool_names
from sttgym.world import World

from sttgym.envs.scramble.machine import decrypt, mount_of, normalize_path, resolve_host

__all__ = ["Terminal", "FUNCTIONS"]


def _sorted_rows(table: dict, key: str | None = None) -> list[dict]:
    rows = [dict(row) for row in table.values()]
    return sorted(rows, key=lambda r: r[key]) if key else rows


class Terminal(World):
    """A Linux server's terminal, reduced to 28 read-only functions."""

    domain = "ScrambleTool"
    description = "A simulated Linux terminal: files, processes, users, environment, cron, network, hardware."

    # ---------------------------------------------------------------- files

    @tool
    def list_dir(self, path: str) -> dict:
        """Lists all files and directories in a given virtual filesystem path (directories end with '/').

        Args:
            path: Absolute directory path.
        """
        path = normalize_path(path)
        entry = self.fs.get(path)
        if entry is None:
            return fail(f"ls: cannot access '{path}': No such directory")
        if entry["kind"] != "dir":
            return fail(f"ls: '{path}' is not a directory")
        names = [posixpath.basename(p) + ("/" if e["kind"] == "dir" else "")
                 for p, e in self.fs.items() if p != path and posixpath.dirname(p) == path]
        return ok(sorted(names))

    @tool
    def read_file(self, file_path: str) -> dict:
        """Reads the full text content of a file from the virtual filesystem.

        Args:
            file_path: Absolute path of the file.
        """
        entry = self.fs.get(normalize_path(file_path))
        if entry is None:
            return fail(f"File not found: {file_path}")
        if entry["kind"] != "file":
            return fail(f"Cannot read {file_path}: it is a {'directory' if entry['kind'] == 'dir' else 'binary archive'}")
        return ok(entry["content"])

    @tool
    def search_text(self, query: str) -> dict:
        """Globally searches across all files in the virtual filesystem for a plain-text substring.

        Args:
            query: The substring to look for.
        """
        if not query:
            return fail("search: the query is empty")
        hits = [{"path": path, "line": line}
                for path, entry in sorted(self.fs.items()) if entry["kind"] == "file"
                for line in entry["content"].splitlines() if query in line]
        return ok(hits)

    @tool
    def get_file_metadata(self, file_path: str) -> dict:
        """Queries filesystem metadata, including its size, owner, and modification times.

        Args:
            file_path: Absolute path of the file or directory.
        """
        path = normalize_path(file_path)
        entry = self.fs.get(path)
        if entry is None:
            return fail(f"stat: cannot stat '{file_path}': No such file or directory")
        return ok({"path": path, "kind": entry["kind"], "size": _size(entry), "owner": entry["owner"],
                   "group": entry["group"], "modified": entry["modified"]})

    @tool
    def get_file_type(self, file_path: str) -> dict:
        """Determines the specific MIME or media type associated with a given file path.

        Args:
            file_path: Absolute path of the file.
        """
        entry = self.fs.get(normalize_path(file_path))
        if entry is None:
            return fail(f"file: cannot open '{file_path}' (No such file or directory)")
        return ok(entry["mime"])

    @tool
    def get_file_permissions(self, file_path: str) -> dict:
        """Retrieves the active read/write/execute permission flags of a file path.

        Args:
            file_path: Absolute path of the file or directory.
        """
        entry = self.fs.get(normalize_path(file_path))
        if entry is None:
            return fail(f"Permission check failed for '{file_path}': no such path")
        return ok({"mode": entry["mode"], "octal": _octal(entry["mode"]), "owner": entry["owner"],
                   "group": entry["group"]})

    @tool
    def get_disk_usage(self, path: str) -> dict:
        """Retrieves partition disk usage metrics (total, used, free space) for a given filesystem path.

        Args:
            path: Absolute path on the partition of interest.
        """
        path = normalize_path(path)
        if path not in self.fs:
            return fail(f"df: {path}: no such file or directory to measure")
        point = mount_of(self.state, path)
        volume = self.mounts[point]
        return ok({"mount": point, "device": volume["device"], "total": volume["total"], "used": volume["used"],
                   "free": volume["total"] - volume["used"]})

    @tool
    def list_archive_contents(self, archive_path: str) -> dict:
        """Traverses and lists the contents of a compressed zip/tar archive file.

        Args:
            archive_path: Absolute path of the archive.
        """
        entry = self.fs.get(normalize_path(archive_path))
        if entry is None:
            return fail(f"Archive not found: {archive_path}")
        if entry["kind"] != "archive":
            return fail(f"Not an archive: {archive_path}")
        return ok([{"name": name, "size": len(text.encode())} for name, text in sorted(entry["members"].items())])

    @tool
    def read_file_from_archive(self, archive_path: str, file_name: str) -> dict:
        """Reads the text content of a specific file directly from a compressed archive.

        Args:
            archive_path: Absolute path of the archive.
            file_name: Name of the member inside the archive.
        """
        entry = self.fs.get(normalize_path(archive_path))
        if entry is None or entry["kind"] != "archive":
            return fail(f"Cannot open archive {archive_path}")
        if file_name not in entry["members"]:
            return fail(f"No member named {file_name} in {archive_path}")
        return ok(entry["members"][file_name])

    # ---------------------------------------------------------- text tools

    @tool
    def decode_base64(self, text: str) -> dict:
        """In-memory utility that decodes a Base64 string back into UTF-8 text.

        Args:
            text: The Base64 text.
        """
        try:
            return ok(base64.b64decode(text.strip(), validate=True).decode())
        except (binascii.Error, ValueError):
            return fail(f"Invalid Base64 input: {text[:60]}")

    @tool
    def encode_base64(self, text: str) -> dict:
        """In-memory utility that translates raw UTF-8 text into a Base64-encoded string.

        Args:
            text: The text to encode.
        """
        try:
            raw = text.encode()
        except UnicodeEncodeError:  # a lone surrogate is not text that UTF-8 can carry
            return fail("The text is not valid Unicode (it holds a lone surrogate)")
        return ok(base64.b64encode(raw).decode())

    @tool
    def decrypt_payload(self, encrypted_text: str, secret_key: str) -> dict:
        """Decrypts symmetric ciphertext using a secret key to recover the raw plaintext.

        Args:
            encrypted_text: The ciphertext, hexadecimal.
            secret_key: The secret key.
        """
        try:
            plain = decrypt(encrypted_text.strip(), secret_key)
        except ValueError:
            return fail(f"Ciphertext is not hexadecimal: {encrypted_text[:60]}")
        if plain is None:
            return fail("Decryption failed: wrong key or corrupted payload")
        return ok(plain)

    # ---------------------------------------------------- system and users

    @tool
    def get_system_info(self, category: str) -> dict:
        """Retrieves high-level operating system and platform categories (e.g., 'os', 'hardware', 'env').

        Args:
            category: The category to read.
        """
        if category not in self.sysinfo:
            return fail(f"Unknown system information category: {category}")
        return ok(dict(self.sysinfo[category]))

    @tool
    def get_env_variable(self, name: str) -> dict:
        """Retrieves the value of a specific active environment shell variable.

        Args:
            name: The variable's name.
        """
        if name not in self.env:
            return fail(f"Environment variable not set: {name}")
        return ok(self.env[name])

    @tool
    def get_user_groups(self, username: str) -> dict:
        """Queries group membership logs to find assigned Unix groups for a specific user.

        Args:
            username: The user's login name.
        """
        if username not in self.users:
            return fail(f"No such user: {username}")
        return ok(list(self.users[username]["groups"]))

    @tool
    def list_running_processes(self) -> dict:
        """Lists currently active processes running in user-space, detailing their PIDs and names."""
        return ok(_sorted_rows(self.processes, "pid"))

    @tool
    def list_cron_jobs(self) -> dict:
        """Lists all automated periodic cron tasks scheduled on the server."""
        return ok([self.cron[job] | {"id": job} for job in sorted(self.cron)])

    @tool
    def get_cpu_info(self) -> dict:
        """Retrieves processor architecture, physical cores count, threads, model name, and cache metrics."""
        return ok(dict(self.cpu))

    @tool
    def list_kernel_modules(self) -> dict:
        """Lists loaded kernel modules and device drivers active in the kernel memory ring."""
        return ok(_sorted_rows(self.modules, "name"))

    @tool
    def get_shell_info(self) -> dict:
        """Queries terminal size row/column dimensions and active bash shell version details."""
        return ok(dict(self.shell))

    # -------------------------------------------------------------- network

    @tool
    def network_ping(self, host: str) -> dict:
        """Measures network-layer reachability and latency in milliseconds to a target host IP or domain.

        Args:
            host: IP address or host name.
        """
        ip = resolve_host(self.state, host)
        node = self.net.get(ip) if ip else None
        if node is None:
            return fail(f"Host unreachable: {host}")
        return ok({"host": host, "ip": ip, "reply_from": node["reply_from"], "latency_ms": node["latency_ms"],
                   "ttl": node["ttl"]})

    @tool
    def dns_resolve(self, domain: str) -> dict:
        """Resolves an internet domain name into its corresponding IP address mapping.

        Args:
            domain: The domain name.
        """
        if domain not in self.dns:
            return fail(f"DNS lookup failed for {domain}: NXDOMAIN")
        return ok(list(self.dns[domain]))

    @tool
    def check_port_open(self, host: str, port: int) -> dict:
        """Tests a specific remote or local TCP port to see if it is open and accepting traffic.

        Args:
            host: IP address or host name.
            port: TCP port number.
        """
        if not 0 < port < 65536:
            return fail(f"Invalid TCP port: {port}")
        ip = resolve_host(self.state, host)
        node = self.net.get(ip) if ip else None
        if node is None:
            return fail(f"Connection to {host} port {port} failed: no route to host")
        service = node["ports"].get(str(port))
        return ok({"host": host, "port": port, "open": service is not None, "service": service})

    @tool
    def get_active_connections(self) -> dict:
        """Retrieves the table of active local network socket connections currently open on the server."""
        return ok(_sorted_rows(self.connections, "local"))

    @tool
    def get_network_interfaces(self) -> dict:
        """Lists active system network adapters, their physical interfaces, and device statuses."""
        return ok(_sorted_rows(self.interfaces, "name"))

    @tool
    def get_routing_table(self) -> dict:
        """Queries the kernel IP routing table database, detailing destination targets, interfaces, and gateways."""
        return ok(_sorted_rows(self.routes, "destination"))

    @tool
    def get_etc_hosts(self) -> dict:
        """Looks up local static DNS override records defined inside the hosts resolution mapping."""
        return ok([{"ip": ip, "hostname": name} for name, ip in sorted(self.hosts.items())])

    @tool
    def fetch_web_content(self, url: str) -> dict:
        """Performs an HTTP GET request to retrieve web pages or REST API mocked data.

        Args:
            url: The http(s) URL.
        """
        if url in self.web:
            return ok(self.web[url])
        try:
            parts = urlsplit(url) if url.startswith(("http://", "https://")) else None
            host = parts.hostname if parts else None
        except ValueError:  # e.g. an unclosed IPv6 bracket
            host = None
        if not host:
            return fail(f"Invalid URL: {url[:200]}")
        ip = resolve_host(self.state, host)
        if ip is None or ip not in self.net:
            return fail(f"Could not connect to {host}: host unreachable")
        return fail(f"HTTP 404 Not Found: {url}")


FUNCTIONS: tuple[str, ...] = tool_names(Terminal)


def _size(entry: dict) -> int:
    if entry["kind"] == "file":
        return len(entry["content"].encode())
    if entry["kind"] == "archive":
        return 512 + sum(len(t.encode()) for t in entry["members"].values())
    return 4096


def _octal(mode: str) -> str:
    return "".join(str(sum(bit for bit, flag in zip((4, 2, 1), mode[i:i + 3]) if flag != "-")) for i in (0, 3, 6))
