/**
 * The colour theme: the system's (the default, following `prefers-color-scheme`), or light or
 * dark as chosen in the user menu, remembered in this browser. The stylesheet reads `data-theme`
 * on `<html>` (absent for the system's); the inline script in `index.html` sets it from the same
 * key before the first paint, so a page never flashes the other theme while the app loads.
 */

export const THEMES = ["system", "light", "dark"] as const;

export type Theme = (typeof THEMES)[number];

/** Where the choice is kept; `index.html` reads the same key. */
export const THEME_KEY = "ars.theme";

/** The theme chosen in this browser, or `system` when none (or storage is unavailable). */
export function storedTheme(): Theme {
  let stored: string | null;
  try {
    stored = window.localStorage.getItem(THEME_KEY);
  } catch {
    stored = null;
  }
  return stored === "light" || stored === "dark" ? stored : "system";
}

/** Shows `theme` on the page: pins light or dark, or leaves the choice to the system. */
export function applyTheme(theme: Theme, root: HTMLElement = document.documentElement): void {
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}

/** Switches to `theme` and remembers it for this browser. */
export function chooseTheme(theme: Theme): void {
  try {
    if (theme === "system") window.localStorage.removeItem(THEME_KEY);
    else window.localStorage.setItem(THEME_KEY, theme);
  } catch {
    // Storage may be unavailable (private mode): the choice lasts for this page only.
  }
  applyTheme(theme);
}
