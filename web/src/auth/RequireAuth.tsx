import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Navigate, useLocation } from "react-router-dom";
import { useAuth } from "./AuthContext";

/** Renders `children` for a logged-in user; otherwise goes to the login page and back after. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const { user } = useAuth();
  const location = useLocation();
  const { t } = useTranslation();
  if (user === undefined) return <p className="loading">{t("common.loading")}</p>;
  if (user === null) {
    return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  }
  return children;
}
