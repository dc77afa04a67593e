"""The rendered book in headless Chromium, as a reader without a network sees it: no
request leaves the machine, every image loads, every equation renders (MathJax is
served from the build: book/_ext/offline_mathjax.py) and the console stays clean.

Uses Debian's `chromium` (skipped with a reason where it is absent), driven over the
DevTools protocol on a pipe, against the session's smoke build served on 127.0.0.1.
"""
from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from tests.support.book import Chromium, StaticServer, find_chromium, toc_docnames

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium)")

# Resolve once every image has either loaded or failed, then report each one.
IMAGES_JS = """
Promise.all(Array.from(document.images).map(i => i.complete ? null :
    new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })))
  .then(() => Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
                                                    w: i.naturalWidth, h: i.naturalHeight})))
"""

# Wait for MathJax to typeset the page (up to 20 s), then report each equation Sphinx
# marked up (.math) that has no rendered container, or renders a TeX error.
MATH_JS = """
(async () => {
  const els = Array.from(document.querySelectorAll('.math'));
  if (!els.length) return {n: 0, loaded: null, unrendered: [], errors: []};
  const ready = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
  for (let i = 0; i < 400 && !ready(); i++) await new Promise(r => setTimeout(r, 50));
  if (!ready()) return {n: els.length, loaded: false, unrendered: [], errors: []};
  await MathJax.startup.promise;
  const text = e => e.textContent.trim().slice(0, 80);
  return {n: els.length, loaded: true,
          unrendered: els.filter(e => !e.querySelector('mjx-container')).map(text),
          errors: els.filter(e => e.querySelector('mjx-merror, [data-mjx-error]')).map(text)};
})()
"""


@pytest.fixture(scope="module")
def site(smoke_book):
    b = smoke_book
    with StaticServer(b.html) as server:
        browser = Chromium(CHROMIUM)
        try:
            yield b, server, browser
        finally:
            browser.close()


def _is_local(url: str, base: str) -> bool:
    return url.startswith(base + "/") or url == base or urlparse(url).scheme in ("data", "blob", "about")


def test_no_page_refers_to_another_host(site):
    """Every src and href of a script, stylesheet, font or image points into the build
    (links a reader may click, <a href>, may go anywhere)."""
    build = site[0]
    outside = {}
    for page in build.html.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        refs = re.findall(r'<(?:script|img|iframe|source)\b[^>]*\bsrc="(https?:[^"]+)"', html)
        refs += re.findall(r'<link\b[^>]*\bhref="(https?:[^"]+)"', html)
        if refs:
            outside[str(page.relative_to(build.html))] = sorted(set(refs))
    assert not outside, f"pages load from other hosts: {outside}"


def test_some_page_has_equations(site):
    build = site[0]
    assert any('class="math' in p.read_text(encoding="utf-8") for p in build.html.glob("*.html"))


@pytest.mark.parametrize("doc", toc_docnames())
def test_page_works_offline(site, doc):
    _, server, browser = site
    session = browser.open_page(f"{server.url}/{doc}.html")
    images = browser.evaluate(IMAGES_JS, session)
    math = browser.evaluate(MATH_JS, session)
    browser.drain(1.0)
    broken = [i["src"] for i in images if not i["w"] > 0]
    assert not broken, f"{doc}: images that did not load: {broken}"

    requests = browser.requests(session)
    assert requests, f"{doc}: no request recorded (is the Network domain on?)"
    left = sorted({r["url"] for r in requests if not _is_local(r["url"], server.url)})
    assert not left, f"{doc}: requests that left the machine: {left}"
    failed = [r for r in requests if r["error"] or (r["status"] or 0) >= 400]
    assert not failed, f"{doc}: requests that failed: {failed}"

    if math["n"]:
        assert math["loaded"], f"{doc}: MathJax did not start ({math['n']} equations)"
        assert not math["unrendered"], f"{doc}: equations not rendered: {math['unrendered']}"
        assert not math["errors"], f"{doc}: equations with TeX errors: {math['errors']}"

    problems = browser.problems(session)
    assert not problems, f"{doc}: console errors: {problems}"
