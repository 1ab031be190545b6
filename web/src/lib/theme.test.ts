import { beforeEach, describe, expect, test } from "vitest";
import indexHtml from "../../index.html?raw";
import styles from "../styles.css?raw";
import { applyTheme, chooseTheme, storedTheme, THEME_KEY } from "./theme";

const root = document.documentElement;

/** Runs index.html's inline script, as the browser does before the first paint. */
function runInlineScript() {
  const scripts = [...indexHtml.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  expect(scripts).toHaveLength(1);
  new Function(scripts[0]!)();
}

/** The light and the dark value of a `--name: light-dark(#light, #dark)` colour of the stylesheet. */
function pair(name: string): [string, string] {
  const match = new RegExp(`${name}:\\s*light-dark\\((#[0-9a-f]{6}),\\s*(#[0-9a-f]{6})\\)`, "i").exec(styles);
  if (!match) throw new Error(`${name} is not a light-dark() pair`);
  return [match[1]!, match[2]!];
}

/** WCAG 2 relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

beforeEach(() => {
  delete root.dataset.theme;
});

describe("the colour theme", () => {
  test("is the system's until the user chooses one", () => {
    expect(storedTheme()).toBe("system");
    applyTheme(storedTheme());
    expect(root.dataset.theme).toBeUndefined();
  });

  test("a choice shows at once and is remembered; System forgets it", () => {
    chooseTheme("dark");
    expect(root.dataset.theme).toBe("dark");
    expect(window.localStorage.getItem(THEME_KEY)).toBe("dark");
    expect(storedTheme()).toBe("dark");

    chooseTheme("light");
    expect(root.dataset.theme).toBe("light");
    expect(storedTheme()).toBe("light");

    chooseTheme("system");
    expect(root.dataset.theme).toBeUndefined();
    expect(window.localStorage.getItem(THEME_KEY)).toBeNull();
  });

  test("a stored value that is no theme reads as the system's", () => {
    window.localStorage.setItem(THEME_KEY, "purple");
    expect(storedTheme()).toBe("system");
  });

  test("index.html applies the stored choice before the app loads, from the same key", () => {
    window.localStorage.setItem(THEME_KEY, "dark");
    runInlineScript();
    expect(root.dataset.theme).toBe("dark");

    delete root.dataset.theme;
    window.localStorage.setItem(THEME_KEY, "<img>");
    runInlineScript();
    expect(root.dataset.theme).toBeUndefined();
  });

  test("the stylesheet pins each theme and has no colour a chosen theme would miss", () => {
    expect(styles).toMatch(/:root\[data-theme="light"\]\s*\{\s*color-scheme:\s*light;/);
    expect(styles).toMatch(/:root\[data-theme="dark"\]\s*\{\s*color-scheme:\s*dark;/);
    // A media query follows the system only: the user's choice would not reach its colours.
    expect(styles).not.toMatch(/prefers-color-scheme/);
  });

  test("a user message's time is readable on the accent bubble in both themes (4.5:1)", () => {
    expect(styles).toMatch(/\.message\.user \.message-foot time\s*\{\s*color:\s*var\(--accent-text-muted\);/);
    const [accentLight, accentDark] = pair("--accent");
    const [timeLight, timeDark] = pair("--accent-text-muted");
    expect(contrast(timeLight, accentLight)).toBeGreaterThanOrEqual(4.5);
    expect(contrast(timeDark, accentDark)).toBeGreaterThanOrEqual(4.5);
  });
});
