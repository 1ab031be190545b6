/**
 * The app's keyboard shortcuts: how a key is written on this platform, and whether a key press
 * happened where typing goes (a `?` typed into a text field is text, not a shortcut).
 */

/** Apple keyboards say ⌘ where others say Ctrl. */
export function isApplePlatform(nav: Pick<Navigator, "platform" | "userAgent"> = navigator): boolean {
  const data = (nav as Navigator & { userAgentData?: { platform?: string } }).userAgentData;
  return /mac|iphone|ipad|ipod/i.test(data?.platform || nav.platform || nav.userAgent || "");
}

/** The command palette's shortcut as this platform writes it: "⌘K" or "Ctrl+K". */
export function paletteKeys(apple = isApplePlatform()): string {
  return apple ? "⌘K" : "Ctrl+K";
}

/** Ctrl+K, or ⌘K (either is taken, so an external keyboard on a Mac works as well). */
export function isPaletteKey(
  event: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey" | "shiftKey">,
) {
  return (
    event.key.toLowerCase() === "k" && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey
  );
}

/** The element takes typed text: a `?` pressed there is a character, not a shortcut. */
export function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) {
    return !["button", "checkbox", "radio", "submit", "reset", "file", "range", "color", "image"].includes(
      target.type,
    );
  }
  return false;
}

/** `?` outside a text field, with no modifier but Shift (which a `?` needs on most layouts). */
export function isHelpKey(event: KeyboardEvent): boolean {
  return event.key === "?" && !event.ctrlKey && !event.metaKey && !event.altKey && !isTextEntry(event.target);
}
