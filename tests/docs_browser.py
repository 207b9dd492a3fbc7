"""Helpers for tests/test_docs.py: serve the built docs site on localhost and look at it in headless Chromium.

Chromium and its driver are Debian's packages (``apt-get install -y chromium chromium-driver``): no browser is
downloaded. Selenium drives them through /usr/bin/chromedriver (``KELM_NB_CHROMIUM`` / ``KELM_NB_CHROMEDRIVER``
name other paths). Run as a script to screenshot a page of a built site:

    python tests/docs_browser.py _docs index.html /tmp/index.png [--full]
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

CHROMIUM_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--disable-dev-shm-usage', '--hide-scrollbars')


def chromium_paths():
    "(chromium, chromedriver) executables, or None for each one that is missing."
    def find(env, default, name):
        path = os.environ.get(env) or (default if Path(default).exists() else shutil.which(name))
        return path if path and Path(path).exists() else None
    return (find('KELM_NB_CHROMIUM', '/usr/bin/chromium', 'chromium'),
            find('KELM_NB_CHROMEDRIVER', '/usr/bin/chromedriver', 'chromedriver'))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    "Serves the site folder and records every request's path and status."

    def log_message(self, format, *args):
        pass

    def log_request(self, code='-', size='-'):
        self.server.requests.append((self.path, int(getattr(code, 'value', code))))


@contextlib.contextmanager
def serve(site_dir):
    "An HTTP server on 127.0.0.1 (a free port) serving `site_dir`; yields (base url, list of (path, status))."
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{server.server_address[1]}/', server.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def chromium_driver():
    "A selenium Chrome driver on Debian's Chromium (headless, fresh profile, console messages logged)."
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    chromium, chromedriver = chromium_paths()
    if chromium is None or chromedriver is None:
        raise RuntimeError('Chromium or chromedriver not found: apt-get install -y chromium chromium-driver')
    with tempfile.TemporaryDirectory(prefix='kelm_nb_chromium_') as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in CHROMIUM_FLAGS: options.add_argument(flag)
        options.add_argument(f'--user-data-dir={profile}')
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
        try:
            driver.set_page_load_timeout(60)
            fit_viewport(driver)
            yield driver
        finally:
            driver.quit()


VIEWPORT = (1280, 900)


def fit_viewport(driver, width=VIEWPORT[0], height=VIEWPORT[1]):
    "Size the window so that the page's viewport (what a screenshot shows) is `width` × `height`."
    driver.set_window_size(width, height)
    inner_w, inner_h = driver.execute_script('return [window.innerWidth, window.innerHeight]')
    driver.set_window_size(2 * width - inner_w, 2 * height - inner_h)


PAGE_PROBE = """
const imgs = Array.from(document.images).map(i => ({src: i.getAttribute('src'), complete: i.complete,
                                                   width: i.naturalWidth, height: i.naturalHeight}));
const h1 = document.querySelector('h1');
return {title: document.title, h1: h1 ? h1.innerText : '', text: document.body.innerText, images: imgs,
        tex: document.querySelectorAll('.math').length,
        mathjax: document.querySelectorAll('mjx-container').length,
        math_errors: document.querySelectorAll('mjx-merror, .MathJax_Error').length,
        tracebacks: document.querySelectorAll('.output.traceback, .output_error').length,
        links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href)};
"""

MATHJAX_DONE = """
const done = arguments[arguments.length - 1];
if (!document.querySelector('.math') || !window.MathJax) { done(false); return; }
const wait = () => (MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise.then(() => done(true))
                                                                 : setTimeout(wait, 50);
wait();
"""


def wait_for_images(driver, timeout=30):
    "Wait until every <img> of the page has finished loading (or failed)."
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script('return Array.from(document.images).every(i => i.complete)'))


def wait_for_mathjax(driver, timeout=60):
    "Wait until MathJax has typeset the page's math (pages without math return at once)."
    driver.set_script_timeout(timeout)
    return driver.execute_async_script(MATHJAX_DONE)


def probe_page(driver, url):
    "Open `url`; return what tests/test_docs.py checks: title, h1, text, images, math, console errors."
    driver.get(url)
    for img in driver.find_elements('css selector', 'img'):  # lazy images load once scrolled into view
        driver.execute_script('arguments[0].scrollIntoView()', img)
    wait_for_images(driver)
    wait_for_mathjax(driver)
    driver.execute_script('window.scrollTo(0, 0)')
    report = driver.execute_script(PAGE_PROBE)
    report['console'] = [e for e in driver.get_log('browser') if e.get('level') == 'SEVERE']
    return report


def search(driver, base, query, timeout=30):
    "Sphinx's own search page for `query`: the result links once the index has been searched."
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(f'{base}search.html?q={query}')
    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(  # the title changes once all results are in
        "const h = document.querySelector('#search-results h2'); return h && h.innerText.includes('Results')"))
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#search-results ul.search li a')).map(a => a.href)")


def screenshot(driver, url, path, full_page=False):
    """Save a PNG of `url` (the 1280×900 viewport, or the whole page up to 8000 px high); `url` None: the page the
    driver shows, as it is (one `probe_page` just loaded, its images loaded and its math typeset)."""
    if url is not None:
        driver.get(url)
        wait_for_images(driver)
        wait_for_mathjax(driver)
    if full_page:
        height = min(8000, driver.execute_script('return document.documentElement.scrollHeight'))
        fit_viewport(driver, VIEWPORT[0], max(VIEWPORT[1], height))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    if full_page: fit_viewport(driver)
    return Path(path)


def png_summary(path):
    "(format, width, height, number of distinct grey levels) of an image file: a blank page has one or two."
    from PIL import Image  # Pillow comes with matplotlib
    with Image.open(path) as img:
        grey = img.convert('L')
        return img.format, img.width, img.height, len(grey.getcolors(maxcolors=256) or ())


if __name__ == '__main__':
    site, page, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    with serve(site) as (base, _), chromium_driver() as driver:
        screenshot(driver, base + page, out, full_page='--full' in sys.argv)
    print(out)
