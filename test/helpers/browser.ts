/**
 * Headless Chromium for the dashboard tests: Debian's `chromium-headless-shell` (or, where only that
 * is installed, its `chromium`) driven by playwright-core (.ci/run installs the package when missing).
 * The headless shell is the build Playwright itself runs headless tests on: the same renderer
 * without the browser's own windows and their interface, at half the CPU of a test's pages. Every page a test opens records its console errors
 * and uncaught exceptions, and can be checked with axe-core, injected through the DevTools protocol
 * (which the page's Content-Security-Policy does not govern).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ?? '/usr/bin/chromium';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(): Promise<Browser> {
  // --no-sandbox: the tests run as root in CI containers, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'], headless: true });
}

/**
 * One Chromium for the tests of a file: launched before them, closed after them. Call it at the top
 * level of the file; the getter is for use inside the tests.
 */
export function browserForTests(): () => Browser {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchBrowser();
  });
  after(() => browser?.close());
  return () => {
    assert.ok(browser, 'the browser is launched before the tests run');
    return browser;
  };
}

/**
 * With DASHBOARD_SCREENSHOTS=<dir>, a full-page screenshot named dashboard-<name>.png, taken in the
 * SQLite run only (both stores render the same pages).
 */
export function screenshotter(engine: 'sqlite' | 'postgres'): ((page: Page, name: string) => Promise<void>) & { readonly enabled: boolean } {
  const folder = engine === 'sqlite' ? process.env.DASHBOARD_SCREENSHOTS : undefined;
  const shoot = async (page: Page, name: string) => {
    if (folder) await page.screenshot({ path: join(folder, `dashboard-${name}.png`), fullPage: true });
  };
  return Object.assign(shoot, { enabled: folder !== undefined && folder !== '' });
}

/** Fills in and sends the sign-in form of the page it is on; the caller waits for where it leads. */
export async function submitSignIn(page: Page, user: { readonly email: string; readonly password: string }): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export interface WatchedPage {
  readonly page: Page;
  /** Console errors and uncaught exceptions seen so far. */
  readonly problems: string[];
}

export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} (${page.url()})`);
  });
  page.on('pageerror', (error) => problems.push(`exception: ${error.message} (${page.url()})`));
  // Destructive buttons ask first (dashboard.js); the tests mean it.
  page.on('dialog', (dialog) => void dialog.accept());
  return { page, problems };
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function assertAccessible(page: Page): Promise<void> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }
    ).axe.run();
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  })) as { id: string; impact: string; help: string; targets: string[] }[];
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  assert.deepEqual(serious, [], `accessibility violations on ${page.url()}`);
}
