import { Suspense, useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { NavLink, Outlet, useLocation } from "react-router-dom";
import { useUser } from "../auth/AuthContext";
import { CommandPalette } from "./CommandPalette";
import { isHelpKey, isPaletteKey } from "./keys";
import { ShortcutsDialog } from "./ShortcutsDialog";
import { UserMenu } from "./UserMenu";

/**
 * Moves focus to the page's `<main>` (every page renders one), without changing the URL: a
 * `#main` hash would be a navigation of its own to the router.
 */
function focusMain(shell: Element | null) {
  const main = shell?.querySelector<HTMLElement>("main");
  if (!main) return;
  if (!main.hasAttribute("tabindex")) main.setAttribute("tabindex", "-1");
  main.focus();
}

/** What the keyboard opened over the page: the command palette or the list of shortcuts. */
type Overlay = "palette" | "shortcuts" | null;

/** A dialog of the page's own, not the shell's palette or shortcuts. */
const OTHER_DIALOG =
  '[role="dialog"]:not([data-testid="command-palette"]):not([data-testid="shortcuts-dialog"])';

export function AppShell() {
  const { t } = useTranslation();
  const user = useUser();
  const location = useLocation();
  // On a narrow screen the navigation is a menu, open for the address it was opened at: going
  // anywhere closes it.
  const [menuOpenAt, setMenuOpenAt] = useState<string | null>(null);
  const menuOpen = menuOpenAt === location.key;
  const menuButton = useRef<HTMLButtonElement>(null);
  const nav = useRef<HTMLElement>(null);
  const [overlay, setOverlay] = useState<Overlay>(null);
  const closeOverlay = useCallback(() => setOverlay(null), []);
  const overlayOpen = useRef(false);
  useEffect(() => {
    overlayOpen.current = overlay !== null;
  }, [overlay]);

  const closeMenu = useCallback((refocus: boolean) => {
    setMenuOpenAt(null);
    if (refocus) menuButton.current?.focus();
  }, []);

  // The menu open: focus on its first link; Escape or a click elsewhere closes it.
  useEffect(() => {
    if (!menuOpen) return;
    nav.current?.querySelector<HTMLElement>("a")?.focus();
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === "Escape" && !document.querySelector('[role="dialog"]')) closeMenu(true);
    };
    const onMouseDown = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!nav.current?.contains(target) && !menuButton.current?.contains(target)) closeMenu(false);
    };
    document.addEventListener("keydown", onKeyDown);
    document.addEventListener("mousedown", onMouseDown);
    return () => {
      document.removeEventListener("keydown", onKeyDown);
      document.removeEventListener("mousedown", onMouseDown);
    };
  }, [menuOpen, closeMenu]);

  // Ctrl+K / ⌘K anywhere; `?` where it is not typed into a field (and no dialog is open). A
  // page's own dialog (a confirmation, a preview) keeps the keyboard to itself.
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (document.querySelector(OTHER_DIALOG)) return;
      if (isPaletteKey(event)) {
        event.preventDefault();
        setMenuOpenAt(null);
        setOverlay((open) => (open === "palette" ? null : "palette"));
      } else if (isHelpKey(event) && !overlayOpen.current) {
        event.preventDefault();
        setMenuOpenAt(null);
        setOverlay("shortcuts");
      }
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, []);

  return (
    <div className="shell">
      {/* The first stop of Tab: straight past the navigation to the page's own region. */}
      <a
        href="#main"
        className="skip-link"
        data-testid="skip-link"
        onClick={(event) => {
          event.preventDefault();
          focusMain(event.currentTarget.closest(".shell"));
        }}
      >
        {t("nav.skipToContent")}
      </a>
      <header className="topbar">
        <button
          type="button"
          ref={menuButton}
          className="nav-menu-toggle"
          data-testid="nav-menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => (menuOpen ? closeMenu(false) : setMenuOpenAt(location.key))}
        >
          <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d="M4 6h16M4 12h16M4 18h16" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
          {t("nav.menu")}
        </button>
        <span className="brand">ARS</span>
        <nav
          id="main-nav"
          ref={nav}
          className={menuOpen ? "main-nav open" : "main-nav"}
          aria-label={t("nav.main")}
          onClick={(event) => {
            // A link chosen in the menu: the menu closes, the focus back on its button.
            if (menuOpen && (event.target as Element).closest("a")) closeMenu(true);
          }}
        >
          <NavLink to="/chat" data-testid="nav-chat">
            {t("nav.chat")}
          </NavLink>
          <span className="nav-group" role="group" aria-label={t("nav.modelConfig")}>
            <span className="nav-group-label" aria-hidden="true">
              {t("nav.modelConfig")}
            </span>
            {user.role === "admin" && (
              <NavLink to="/providers" data-testid="nav-providers">
                {t("nav.providers")}
              </NavLink>
            )}
            <NavLink to="/agents" data-testid="nav-agents">
              {t("nav.agents")}
            </NavLink>
            <NavLink to="/skills" data-testid="nav-skills">
              {t("nav.skills")}
            </NavLink>
            <NavLink to="/mcp-servers" data-testid="nav-mcp-servers">
              {t("nav.mcpServers")}
            </NavLink>
            <NavLink to="/knowledge" data-testid="nav-knowledge">
              {t("nav.knowledge")}
            </NavLink>
          </span>
          <NavLink to="/usage" data-testid="nav-usage">
            {t("nav.usage")}
          </NavLink>
          {user.role === "admin" && (
            <span className="nav-group" role="group" aria-label={t("nav.admin")}>
              <NavLink to="/admin/users" data-testid="nav-users">
                {t("nav.users")}
              </NavLink>
            </span>
          )}
        </nav>
        <UserMenu onShortcuts={() => setOverlay("shortcuts")} />
      </header>
      <Suspense fallback={<p className="loading">{t("common.loading")}</p>}>
        <Outlet />
      </Suspense>
      {overlay === "palette" && (
        <CommandPalette onClose={closeOverlay} onShortcuts={() => setOverlay("shortcuts")} />
      )}
      {overlay === "shortcuts" && <ShortcutsDialog onClose={closeOverlay} />}
    </div>
  );
}
