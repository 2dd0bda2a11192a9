"""Open the built documentation in headless Chromium and check what a reader sees.

Run after ``docs/build.sh`` (scripts/test.d/40-docs.sh does)::

    python docs/browser_check.py [docs/_build/html] [--screenshots DIR]

The site is served from a local HTTP server on 127.0.0.1 and Chromium is
told that no other host exists (``--host-resolver-rules``), as on a machine
without internet. Chromium is driven through the DevTools protocol over a
pipe (``--remote-debugging-pipe``), so nothing beyond the standard library
and Debian's ``chromium`` is needed. Every page of the site except the
generated API stubs is opened (a sample of those too); on each:

- no request leaves 127.0.0.1; no page of the build (the R vignette's
  included) names a CDN or loads a script, stylesheet or image from another
  host;
- every ``\\(``/``\\[`` of the text became rendered math, and MathJax
  reports no error;
- every image loads (``naturalWidth > 0``);
- nothing in the main column is wider than the column (a table or a display
  equation cut at its edge), and no section heading is a link;
- the navigation lists the site's pages (the header on every page, the
  section sidebar where it is shown).

Screenshots of five key pages go to ``docs/_build/screenshots/`` (kept by CI
as artefacts). Exit status 1 with one line per problem when a check fails.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VIEWPORT = (1280, 900)
#: Pages shown as screenshots: (page, file name).
SCREENSHOTS = [
    ("index.html", "01_home.png"),
    ("theory.html", "02_theory.png"),
    ("user_guide/expected_kernels.html", "03_user_guide.png"),
    ("auto_examples/plot_kernel_matrix.html", "04_gallery_kernel_matrix.png"),
    ("_vignettes/06_real_missingness/README.html", "05_vignette_06.png"),
]
#: The top-level pages the header navigation must link to.
NAV_PAGES = [
    "install.html",
    "user_guide/index.html",
    "theory.html",
    "auto_examples/index.html",
    "vignettes.html",
    "api.html",
    "cli.html",
]
#: Sections whose pages the section sidebar must list (filled by ``main``).
SECTIONS: dict[str, list[str]] = {}
CDN_MARKERS = ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "polyfill.io")
MAX_SHOT_HEIGHT = 5000  # px: a full page is cut here (theory is ~50000 px)

# Run in the page: math left as TeX, rendered, wrong; images; overflow of the
# main column; headings that are links; navigation links.
PAGE_PROBE = (HERE / "browser_probe.js").read_text()


class Chromium:
    """A headless Chromium driven over ``--remote-debugging-pipe``."""

    def __init__(self, binary: str, profile: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",  # containers with a small /dev/shm
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--hide-scrollbars",
            "--font-render-hinting=none",
            f"--user-data-dir={profile}",
            # A machine without internet: only the local server resolves.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--remote-debugging-pipe",
            "about:blank",
        ]

        def child_fds() -> None:
            # Chromium reads commands on fd 3 and writes replies on fd 4.
            read_end, write_end = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(
            [binary, *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=child_fds,
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError(
                        "Chromium closed the DevTools pipe (it crashed?)"
                    )
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)  # type: ignore[no-any-return]

    def send(self, method: str, session: str | None = None, **params: Any) -> Any:
        self._next_id += 1
        call: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            call["sessionId"] = session
        os.write(self._to_browser, json.dumps(call).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, session: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method and event.get("sessionId") == session:
                    del self.events[i]
                    return True
            try:
                message = self._read_message(deadline)
            except TimeoutError:
                return False
            if "method" in message:
                self.events.append(message)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def find_chromium() -> str:
    for candidate in (
        os.environ.get("MK_CHROMIUM", ""),
        "/usr/lib/chromium/chromium",  # Debian's binary, without the wrapper script
        shutil.which("chromium") or "",
        shutil.which("chromium-headless-shell") or "",
        "/usr/lib/chromium/chromium-headless-shell",
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit(
        "error: no Chromium found: install Debian's chromium (scripts/test.sh does) "
        "or set MK_CHROMIUM to the browser's path"
    )


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def pages_to_open(root: Path) -> list[str]:
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    # r/: the R vignette as rmarkdown wrote it (only the static checks).
    skip = ("_static/", "_sources/", "_modules/", "_images/", "_downloads/", "r/")
    pages = [p for p in pages if not p.startswith(skip)]
    generated = [p for p in pages if p.startswith("generated/")]
    rest = [p for p in pages if not p.startswith("generated/")]
    # The API stubs share one template: every fifth is enough, and the
    # densities module (the most formulas) in full.
    sample = [p for i, p in enumerate(generated) if i % 5 == 0 or "densities" in p]
    return rest + sample


def static_checks(root: Path) -> list[str]:
    """Pages that name a CDN or load a script, stylesheet or image from
    another host (links to other sites are fine)."""
    remote = re.compile(
        r"<(?:script|img|iframe)\b[^>]*\bsrc=[\"'](?:https?:)?//[^\"']+"
        r"|<link\b[^>]*\bhref=[\"'](?:https?:)?//[^\"']+[^>]*>",
        re.I,
    )
    problems = []
    for page in sorted(root.rglob("*.html")):
        text = page.read_text(errors="replace")
        rel = page.relative_to(root).as_posix()
        for marker in CDN_MARKERS:
            if marker in text:
                problems.append(f"{rel}: names the CDN {marker}")
        for match in remote.finditer(text):
            tag = match.group(0)
            if tag.lower().startswith("<link") and not re.search(
                r"rel=[\"']?(stylesheet|preload|modulepreload|icon)", tag, re.I
            ):
                continue
            problems.append(f"{rel}: loads from another host: {tag[:100]}")
    return problems


def check_page(
    browser: Chromium, session: str, base: str, page: str, shot: Path | None
) -> list[str]:
    problems = []
    browser.send("Page.navigate", session, url=base + page)
    if not browser.wait_event("Page.loadEventFired", session, timeout=30):
        return [f"{page}: did not finish loading in 30 s"]
    result = browser.send(
        "Runtime.evaluate",
        session,
        expression=PAGE_PROBE,
        awaitPromise=True,
        returnByValue=True,
        timeout=60000,
    )
    if "exceptionDetails" in result:
        return [f"{page}: the probe failed: {result['exceptionDetails']}"]
    r = result["result"]["value"]
    if r["raw"]:
        problems.append(
            f"{page}: {len(r['raw'])} formulas left as TeX source (MathJax "
            f"{'ran' if r['typeset'] else 'did not load'}), e.g. {r['raw'][0]!r}"
        )
    if r["sources"] and r["rendered"] < r["sources"]:
        problems.append(f"{page}: {r['rendered']} of {r['sources']} formulas rendered")
    for error in r["errors"]:
        problems.append(f"{page}: MathJax error: {error}")
    for src in r["broken"]:
        problems.append(f"{page}: image does not load: {src}")
    for item in r["overflow"]:
        problems.append(f"{page}: wider than the main column by {item}")
    for item in r["scrollers"]:
        problems.append(f"{page}: cut (scrolls sideways): {item}")
    for heading in r["linkedHeadings"]:
        problems.append(f"{page}: heading rendered as a link: {heading!r}")
    header = {h.split("#")[0].removeprefix(base) for h in r["header"]}
    missing = [p for p in NAV_PAGES if p not in header and p != page]
    if missing:
        problems.append(f"{page}: header navigation lacks {', '.join(missing)}")
    if r["sidebarShown"] and not r["sectionLinks"]:
        problems.append(f"{page}: 'Section Navigation' sidebar shown empty")
    # In a section (user guide, examples, vignettes) the sidebar lists every
    # page of the section.
    folder = page.rsplit("/", 1)[0] if "/" in page else ""
    if folder in SECTIONS and r["sidebarShown"]:
        listed = {h.split("#")[0].removeprefix(base) for h in r["sectionLinks"]}
        missing = [p for p in SECTIONS[folder] if p not in listed and p != page]
        if missing:
            problems.append(f"{page}: section navigation lacks {', '.join(missing)}")
    if shot is not None:
        height = min(r["height"], MAX_SHOT_HEIGHT)
        data = browser.send(
            "Page.captureScreenshot",
            session,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": VIEWPORT[0], "height": height, "scale": 1},
        )["data"]
        shot.write_bytes(base64.b64decode(data))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE / "_build" / "html"))
    parser.add_argument("--screenshots", default=str(HERE / "_build" / "screenshots"))
    parser.add_argument("--pages", nargs="*", help="only these pages")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if not (root / "index.html").exists():
        sys.exit(
            f"error: {root}/index.html not found: build the site first (docs/build.sh)"
        )
    shots = Path(args.screenshots)
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    start = time.monotonic()
    problems = static_checks(root)
    pages = args.pages or pages_to_open(root)
    for folder in ("user_guide", "auto_examples", "_vignettes"):
        SECTIONS[folder] = sorted(
            p.relative_to(root).as_posix()
            for p in (root / folder).rglob("*.html")
            if p.name != "index.html"
        )
    server, base = serve(root)
    external: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mk-chromium-") as profile:
        browser = Chromium(find_chromium(), profile)
        try:
            target = browser.send("Target.createTarget", url="about:blank")["targetId"]
            session = browser.send(
                "Target.attachToTarget", targetId=target, flatten=True
            )["sessionId"]
            browser.send("Page.enable", session)
            browser.send("Network.enable", session)
            browser.send(
                "Emulation.setDeviceMetricsOverride",
                session,
                width=VIEWPORT[0],
                height=VIEWPORT[1],
                deviceScaleFactor=1,
                mobile=False,
            )
            names = dict(SCREENSHOTS)
            for page in pages:
                shot = shots / names[page] if page in names else None
                problems += check_page(browser, session, base, page, shot)
                for event in browser.events:
                    if event["method"] == "Network.requestWillBeSent":
                        url = event["params"]["request"]["url"]
                        if not url.startswith((base, "data:", "about:", "blob:")):
                            external.append(f"{page}: requests {url}")
                browser.events.clear()
        finally:
            browser.close()
            server.shutdown()
    problems += sorted(set(external))
    for page, name in SCREENSHOTS:
        if page in pages and not (shots / name).exists():
            problems.append(f"{page}: no screenshot taken")
    took = time.monotonic() - start
    if problems:
        print(
            f"browser check: {len(problems)} problems, {len(pages)} pages, {took:.0f}s"
        )
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(
        f"browser check: {len(pages)} pages fine in {took:.0f} s, screenshots: {shots}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
