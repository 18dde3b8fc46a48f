"""The IPv4 and IPv6 sockets a process holds, read from the kernel's tables (/proc/net/udp,
udp6, tcp, tcp6) through the process's descriptors: for the tests that check that nothing
listens or talks beyond the loopback interface (DDS, the local Ray instance)."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class InetSocket:
    protocol: str  # "udp" or "tcp"
    address: str
    port: int
    queued: int  # bytes received and not read yet


def inet_sockets() -> dict[int, InetSocket]:
    """Socket inode -> the socket, for every UDP and TCP socket on the machine."""
    found = {}
    for protocol in ("udp", "tcp"):
        for table, family in ((f"/proc/net/{protocol}", socket.AF_INET), (f"/proc/net/{protocol}6", socket.AF_INET6)):
            if not Path(table).exists():
                continue
            for row in Path(table).read_text().splitlines()[1:]:
                fields = row.split()
                address, port = fields[1].split(":")
                raw = bytes.fromhex(address)
                # the kernel prints each 32-bit word in host byte order
                words = struct.unpack(f"<{len(raw) // 4}I", raw)
                packed = b"".join(struct.pack(">I", w) for w in words)
                queued = int(fields[4].split(":")[1], 16)
                found[int(fields[9])] = InetSocket(protocol, socket.inet_ntop(family, packed), int(port, 16), queued)
    return found


def socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


def process_sockets(pid: int) -> list[InetSocket]:
    table = inet_sockets()
    return [table[i] for i in socket_inodes(pid) if i in table]
