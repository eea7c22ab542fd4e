"""Drive the plugins page of `reasonix serve` in headless Chromium.

Run by tests/serve_browser.rs, which starts the server and prepares the
packages. Environment:
  SERVE_PAGE_URL   the page address with its #token=... fragment
  STARTER_SOURCE   a built copy of examples/starter
  EVIL_SOURCE      a package whose texts try to inject HTML and bidi controls
  SCREENS_DIR      where to write PNG screenshots
  CHROMIUM, CHROMEDRIVER   the browser and its driver (Debian's by default)

Plan -> install the starter -> its FULL TRUST block shows -> disable ->
remove; a wasm package shows its SANDBOXED block; a hostile package's texts
render as inert text.
"""

import os
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

PAGE = os.environ["SERVE_PAGE_URL"]
STARTER = os.environ["STARTER_SOURCE"]
EVIL = os.environ["EVIL_SOURCE"]
BOXED = os.environ["SANDBOXED_SOURCE"]
SCREENS = os.environ["SCREENS_DIR"]
# Long enough for a loaded CI machine to start a sidecar; never a timing check.
WAIT = 120


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1500",
        "--user-data-dir=" + profile,
    ]:
        options.add_argument(flag)
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


def step(name):
    print("step:", name, flush=True)


def main():
    os.makedirs(SCREENS, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            run(driver)
        except Exception:
            driver.save_screenshot(os.path.join(SCREENS, "failure.png"))
            print(driver.page_source[:20000], file=sys.stderr)
            raise
        finally:
            driver.quit()
    print("browser journey ok", flush=True)


def shot(driver, name):
    # From the top and full height, so the whole page is in the picture.
    driver.execute_script("window.scrollTo(0, 0)")
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1280, max(900, min(height + 40, 4000)))
    driver.save_screenshot(os.path.join(SCREENS, name))


def plugin(name):
    return (By.CSS_SELECTOR, '.plugin[data-name="%s"]' % name)


def plan_and_install(driver, wait, source):
    field = driver.find_element(By.ID, "source")
    field.clear()
    field.send_keys(source)
    driver.find_element(By.ID, "plan-btn").click()
    return wait.until(ec.element_to_be_clickable((By.ID, "install-btn")))


def run(driver):
    wait = WebDriverWait(driver, WAIT)
    driver.get(PAGE)
    step("page loaded")
    wait.until(ec.presence_of_element_located((By.ID, "no-plugins")))
    # The token left the address bar and stays in this tab only.
    assert driver.execute_script("return location.hash") == "", driver.current_url
    assert "#token" not in driver.current_url, driver.current_url
    assert driver.execute_script("return sessionStorage.getItem('reasonix-serve-token')") == PAGE.split("#token=")[1]
    wait.until(lambda d: "generation" in d.find_element(By.ID, "runtime-status").text)
    assert driver.find_element(By.ID, "chat").get_attribute("data-phase") == "2"
    shot(driver, "01-empty.png")

    step("plan the starter")
    install = plan_and_install(driver, wait, STARTER)
    plan_id = driver.find_element(By.ID, "plan-id").text
    digest = driver.find_element(By.ID, "content-digest").text
    assert plan_id.startswith("high:sha256:"), plan_id
    assert digest.startswith("sha256:") and len(digest) == 71, digest
    assert driver.find_element(By.ID, "plan-risk").text == "risk: high"
    trust = driver.find_element(By.CSS_SELECTOR, "#plan .trust.full")
    assert "FULL TRUST" in trust.text, trust.text
    reason = driver.find_element(By.CSS_SELECTOR, "#plan li.full-trust")
    assert reason.text.startswith("FULL TRUST"), reason.text
    shot(driver, "02-plan.png")

    step("install exactly that plan")
    install.click()
    card = wait.until(ec.presence_of_element_located(plugin("starter")))
    wait.until(lambda d: "starter" in d.find_element(By.ID, "runtime-status").text)
    card = driver.find_element(*plugin("starter"))
    assert card.get_attribute("data-state") == "enabled"
    block = card.find_element(By.CSS_SELECTOR, ".trust.full")
    assert block.find_element(By.CSS_SELECTOR, ".title").text == "FULL TRUST"
    assert "input.receive" in block.text, block.text
    assert "/starter:hello" in card.text, card.text
    assert "compatibility: full" in card.text, card.text
    errors = driver.find_elements(By.CSS_SELECTOR, ".msg.error")
    assert not errors, [e.text for e in errors]
    shot(driver, "03-installed.png")

    step("disable")
    card.find_element(By.CSS_SELECTOR, 'button[data-action="disable"]').click()
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, '.plugin[data-name="starter"][data-state="disabled"]')))
    wait.until(lambda d: "no code extensions" in d.find_element(By.ID, "runtime-status").text)
    shot(driver, "04-disabled.png")

    step("remove")
    driver.find_element(By.CSS_SELECTOR, '.plugin[data-name="starter"] button[data-action="remove"]').click()
    driver.find_element(By.CSS_SELECTOR, '.plugin[data-name="starter"] button[data-action="confirm-remove"]').click()
    wait.until(ec.presence_of_element_located((By.ID, "no-plugins")))
    assert not driver.find_elements(*plugin("starter"))
    shot(driver, "05-removed.png")

    step("a sandboxed package")
    install = plan_and_install(driver, wait, BOXED)
    plan_box = driver.find_element(By.CSS_SELECTOR, "#plan .trust.sandboxed")
    assert "SANDBOXED" in plan_box.text and not driver.find_elements(By.CSS_SELECTOR, "#plan .trust.full")
    install.click()
    card = wait.until(ec.presence_of_element_located(plugin("boxed")))
    block = card.find_element(By.CSS_SELECTOR, ".trust.sandboxed")
    assert block.find_element(By.CSS_SELECTOR, ".title").text == "SANDBOXED"
    for want in ["BOXED_MODE", "32 MiB", "network", "read-only"]:
        assert want in block.text, (want, block.text)
    assert not card.find_elements(By.CSS_SELECTOR, ".trust.full")
    # Its component is not built: the runtime says it is degraded.
    wait.until(lambda d: "degraded: boxed" in d.find_element(By.ID, "runtime-status").text)
    line = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, '.plugin[data-name="boxed"] [data-role="degraded"]')))
    assert "boxed.wasm" in line.text, line.text
    shot(driver, "06-sandboxed.png")

    step("hostile package texts stay text")
    title = driver.title
    plan_and_install(driver, wait, EVIL).click()
    card = wait.until(ec.presence_of_element_located(plugin("evil")))
    assert driver.title == title, driver.title
    assert not card.find_elements(By.TAG_NAME, "img"), "package text was parsed as HTML"
    assert "<img src=x" in card.text, card.text
    assert "\\u{202e}" in card.text and "\u202e" not in card.text, ascii(card.text)
    assert "\\u{1b}" in card.text and "\x1b" not in card.text, ascii(card.text)
    shot(driver, "07-hostile-text.png")


if __name__ == "__main__":
    main()
