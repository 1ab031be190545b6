import { Trans, useTranslation } from "react-i18next";
import { Link, useLocation } from "react-router-dom";

/** Any address the app has no page for: says so, inside the shell, with the way back to the chat. */
export function NotFoundPage() {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  return (
    <main className="page" data-testid="not-found">
      <h1>{t("notFound.title")}</h1>
      <p>
        <Trans i18nKey="notFound.body" values={{ path: pathname }} components={{ code: <code /> }} />
      </p>
      <Link className="button primary" to="/chat" data-testid="not-found-back">
        {t("notFound.back")}
      </Link>
    </main>
  );
}
