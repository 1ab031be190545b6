import { useEffect, useRef, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link, useNavigate } from "react-router-dom";
import { useAuth, useUser } from "../auth/AuthContext";
import { chooseLanguage, currentLanguage, LANGUAGES, type Language } from "../i18n";
import { chooseTheme, storedTheme, THEMES, type Theme } from "../lib/theme";

/**
 * The user's name as a menu button: who am I, the language, the theme, the keyboard shortcuts
 * (`onShortcuts`), and log out.
 */
export function UserMenu({ onShortcuts }: { onShortcuts?: () => void }) {
  const user = useUser();
  const { logout } = useAuth();
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const ref = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    return () => document.removeEventListener("mousedown", close);
  }, [open]);

  return (
    <div
      className="user-menu"
      ref={ref}
      onKeyDown={(e) => {
        if (e.key === "Escape") setOpen(false);
      }}
    >
      <button
        type="button"
        ref={toggle}
        data-testid="user-menu"
        aria-haspopup="true"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {user.username}
      </button>
      {open && (
        <div className="menu" role="menu">
          <p className="muted">
            <Trans
              i18nKey="userMenu.signedInAs"
              values={{ name: user.username, role: t(`roles.${user.role}`) }}
              components={{ strong: <strong /> }}
            />
          </p>
          <label className="menu-setting">
            {t("language.label")}
            <select
              data-testid="language-switch"
              value={currentLanguage()}
              onChange={(e) => void chooseLanguage(e.target.value as Language, user.id)}
            >
              {LANGUAGES.map((lng) => (
                <option key={lng.code} value={lng.code} lang={lng.code}>
                  {lng.label}
                </option>
              ))}
            </select>
          </label>
          <label className="menu-setting">
            {t("theme.label")}
            <select
              data-testid="theme-switch"
              value={theme}
              onChange={(e) => {
                const chosen = e.target.value as Theme;
                chooseTheme(chosen);
                setTheme(chosen);
              }}
            >
              {THEMES.map((choice) => (
                <option key={choice} value={choice}>
                  {t(`theme.${choice}`)}
                </option>
              ))}
            </select>
          </label>
          <Link to="/account" role="menuitem" data-testid="nav-account" onClick={() => setOpen(false)}>
            {t("userMenu.account")}
          </Link>
          {onShortcuts && (
            <button
              type="button"
              role="menuitem"
              data-testid="open-shortcuts"
              onClick={() => {
                // The list's dialog hands the focus back to the menu's button when it closes.
                toggle.current?.focus();
                setOpen(false);
                onShortcuts();
              }}
            >
              {t("userMenu.shortcuts")}
            </button>
          )}
          <button
            type="button"
            role="menuitem"
            data-testid="logout"
            onClick={async () => {
              await logout();
              navigate("/login", { replace: true });
            }}
          >
            {t("userMenu.logout")}
          </button>
        </div>
      )}
    </div>
  );
}
