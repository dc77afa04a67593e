"""The rendered book in headless Chromium: every image loads and the console stays clean.

Uses Debian's `chromium` (skipped with a reason where it is absent), driven over the
DevTools protocol on a pipe, against the session's smoke build served on 127.0.0.1.
"""
from __future__ import annotations

import warnings
from urllib.parse import urlparse

import pytest

from book_helpers import Chromium, StaticServer, find_chromium, smoke_build, toc_docnames

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium)")

# Resolve once every image has either loaded or failed, then report each one.
IMAGES_JS = """
Promise.all(Array.from(document.images).map(i => i.complete ? null :
    new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })))
  .then(() => Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
                                                    w: i.naturalWidth, h: i.naturalHeight})))
"""


@pytest.fixture(scope="module")
def site():
    b = smoke_build()
    assert b.returncode == 0, f"smoke build failed:\n{b.output[-4000:]}"
    with StaticServer(b.html) as server:
        browser = Chromium(CHROMIUM)
        try:
            yield server, browser
        finally:
            browser.close()


def _is_local(url: str, base: str) -> bool:
    return not url or url.startswith(base) or urlparse(url).scheme in ("", "data", "blob", "about")


@pytest.mark.parametrize("doc", toc_docnames())
def test_page_images_load_and_console_is_clean(site, doc):
    server, browser = site
    session = browser.open_page(f"{server.url}/{doc}.html")
    images = browser.evaluate(IMAGES_JS, session)
    browser.drain(1.0)
    broken = [i["src"] for i in images if not i["w"] > 0]
    assert not broken, f"{doc}: images that did not load: {broken}"

    problems = browser.problems(session)
    # Resources on other hosts (MathJax from its CDN) cannot load on an offline machine;
    # they are reported, not failed. Everything the book serves itself must be clean.
    external = [p for p in problems if p.get("url") and not _is_local(p["url"], server.url)]
    local = [p for p in problems if p not in external]
    if external:
        warnings.warn(f"{doc}: external resources failed (offline?): "
                      f"{sorted({p['url'] for p in external})}")
    assert not local, f"{doc}: console errors: {local}"
