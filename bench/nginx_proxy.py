"""nginx as a path: the physical floor of a reverse proxy in front of the same tiny server.

The distribution's package (``apt-get install nginx-light``; ``bench/run`` installs it where it
can), started by the bench with a generated config: one worker, upstream keep-alive, no
buffering (so each SSE frame is forwarded as it arrives, as Pairwise does), no access log.
Where nginx is not installed, the path is skipped with a note.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from app.harness import child_env, free_port, stop_process, wait_until

CONFIG = """\
{user}worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream tiny {{ server {upstream}; keepalive 512; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://tiny;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
}}
"""


def binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if os.access(p, os.X_OK)), None)


class Nginx:
    def __init__(self, workdir: Path, upstream_url: str) -> None:
        found = binary()
        if found is None:
            raise FileNotFoundError("nginx is not installed")
        self.binary = found
        self.work = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "nginx.conf"
        # As root, nginx's worker would switch to an unprivileged user that cannot use this private directory.
        user = "user root;\n" if os.geteuid() == 0 else ""
        self.config.write_text(CONFIG.format(user=user, work=workdir, port=self.port,
                                             upstream=urlsplit(upstream_url).netloc))
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    def start(self) -> Nginx:
        began = time.perf_counter()
        with open(self.work / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen([self.binary, "-c", str(self.config), "-p", str(self.work)],
                                         stdout=out, stderr=subprocess.STDOUT, env=child_env())

        def answers() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {(self.work / 'error.log').read_text(errors='replace')[-2000:]}")
            try:
                return httpx.get(f"{self.url}/v1/models", timeout=1, trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, 30, "nginx to answer", interval=0.01)
        self.startup_s = time.perf_counter() - began
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc, wait_s=10)


def version() -> str:
    found = binary()
    if found is None:
        return "not installed"
    result = subprocess.run([found, "-v"], capture_output=True, text=True)
    return (result.stderr or result.stdout).strip().rsplit("/", 1)[-1]
