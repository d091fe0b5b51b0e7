#!/usr/bin/env python3
"""Memory a server keeps per idle connection.

Opens N connections to 127.0.0.1:PORT over http1, h2c, https or h2 (TLS: any certificate,
ALPN for the protocol), has each answered once (GET /health), holds them idle without
reading, and prints the server's RSS and anonymous memory (/proc/PID/status) before and one
second after. 6.5 s later it counts the connections the server has closed (its idle limit
is 5 s). Frames and HPACK are written by hand: nothing to install.

    taskset -c 0 target/release/greet-hyper --port 18080 --workers 1 [--tls-self-signed] &
    taskset -c 1 python3 benches/scripts/idle-connections.py $! 18080 2000 h2c

Open the connections within the idle limit (TLS: a few seconds for 2000) or they are closed
before the reading; `ulimit -n` must allow N.
"""
import socket, ssl, sys, time

pid, port, n, proto = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def mem():
    f = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile"):
            f[k] = int(v.split()[0])
    return f

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"
auth = b"127.0.0.1"
# HPACK: :method GET (2), :scheme http (6), :path literal (name 4), :authority literal (name 1)
block = b"\x82\x86\x44\x07/health\x41" + bytes([len(auth)]) + auth
HEADERS = len(block).to_bytes(3, "big") + b"\x01\x05" + (1).to_bytes(4, "big") + block
HTTP1 = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"

def answered(s, want):
    got = b""
    s.settimeout(5)
    while want not in got:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("closed early")
        got += chunk

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2" if proto == "h2" else "http/1.1"])
time.sleep(0.5)
before = mem()
socks = []
t0 = time.time()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if proto in ("https", "h2"):
        s = ctx.wrap_socket(s, server_hostname="localhost")
        assert s.selected_alpn_protocol() == ("h2" if proto == "h2" else "http/1.1")
    if proto in ("h2c", "h2"):
        s.sendall(PREFACE + SETTINGS + ACK + HEADERS)
        answered(s, b"ok")  # health's body (DATA after HEADERS)
    else:
        s.sendall(HTTP1)
        answered(s, b"ok")
    socks.append(s)
opened = time.time() - t0
time.sleep(1.0)
after = mem()
print(f"{proto} {n} idle connections (opened in {opened:.2f} s): " + ", ".join(
    f"{k} {before[k]/1024:.1f} -> {after[k]/1024:.1f} MiB ({(after[k]-before[k])*1024/n:.0f} B/conn)"
    for k in ("VmRSS", "RssAnon")))
time.sleep(5.5)
closed = 0
for s in socks:
    s.settimeout(0.01)
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed += 1
                break
    except (socket.timeout, ssl.SSLError, OSError) as e:
        if not isinstance(e, socket.timeout):
            closed += 1
late = mem()
print(f"  6.5 s later: {closed}/{n} closed by the server; VmRSS {late['VmRSS']/1024:.1f} MiB, RssAnon {late['RssAnon']/1024:.1f} MiB")
