import { Suspense } from "react";
import { useTranslation } from "react-i18next";
import { NavLink, Outlet } from "react-router-dom";
import { useUser } from "../auth/AuthContext";
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

export function AppShell() {
  const { t } = useTranslation();
  const user = useUser();
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
        <span className="brand">ARS</span>
        <nav aria-label={t("nav.main")}>
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
          {user.role === "admin" && (
            <span className="nav-group" role="group" aria-label={t("nav.admin")}>
              <NavLink to="/admin/users" data-testid="nav-users">
                {t("nav.users")}
              </NavLink>
            </span>
          )}
        </nav>
        <UserMenu />
      </header>
      <Suspense fallback={<p className="loading">{t("common.loading")}</p>}>
        <Outlet />
      </Suspense>
    </div>
  );
}
