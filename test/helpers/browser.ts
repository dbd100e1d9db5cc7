/**
 * Headless Chromium for the dashboard tests: Debian's `chromium` package driven by playwright-core
 * (.ci/run installs the package when missing). Every page a test opens records its console errors
 * and uncaught exceptions, and can be checked with axe-core, injected through the DevTools protocol
 * (which the page's Content-Security-Policy does not govern).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(): Promise<Browser> {
  // --no-sandbox: the tests run as root in CI containers, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'], headless: true });
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
