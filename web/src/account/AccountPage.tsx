import { useState, type FormEvent } from "react";
import { Trans, useTranslation } from "react-i18next";
import { api, errorMessage, unwrap } from "../api";
import type { ApiToken } from "../api/types";
import { useUser } from "../auth/AuthContext";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { CopyButton } from "../components/CopyButton";
import { ListTable } from "../components/ListTable";
import { ErrorNote } from "../components/LoadState";
import { formatDateTime } from "../lib/format";
import { useAsync } from "../lib/useAsync";

/** `/account`: the user's own password and API tokens. */
export function AccountPage() {
  const user = useUser();
  const { t } = useTranslation();
  return (
    <main className="page account-page">
      <h1>{t("account.title")}</h1>
      <p className="muted">
        {t("account.signedInAs", { name: user.username, role: t(`roles.${user.role}`) })}
      </p>
      <PasswordForm />
      <Tokens />
    </main>
  );
}

function PasswordForm() {
  const { t } = useTranslation();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setDone(false);
    if (next !== repeat) {
      setError(t("account.passwordMismatch"));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.PUT("/api/me/password", { body: { current_password: current, new_password: next } }));
      setCurrent("");
      setNext("");
      setRepeat("");
      setDone(true);
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="form-section" aria-labelledby="password-title">
      <h2 id="password-title">{t("account.passwordTitle")}</h2>
      <form className="stack-form" onSubmit={submit}>
        <label>
          {t("account.currentPassword")}
          <input
            type="password"
            autoComplete="current-password"
            data-testid="password-current"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </label>
        <label>
          {t("account.newPassword")}
          <input
            type="password"
            autoComplete="new-password"
            data-testid="password-new"
            required
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
        </label>
        <label>
          {t("account.repeatPassword")}
          <input
            type="password"
            autoComplete="new-password"
            data-testid="password-repeat"
            required
            value={repeat}
            onChange={(e) => setRepeat(e.target.value)}
          />
        </label>
        <p className="hint">{t("account.passwordHint")}</p>
        {error && (
          <p className="error" role="alert" data-testid="password-error">
            {error}
          </p>
        )}
        {done && (
          <p className="success" role="status" data-testid="password-done">
            {t("account.passwordChanged")}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid="password-save" disabled={busy}>
            {busy ? t("common.saving") : t("account.changePassword")}
          </button>
        </div>
      </form>
    </section>
  );
}

const EXPIRY_CHOICES = [7, 30, 90, 365, 0] as const;

function Tokens() {
  const { t } = useTranslation();
  const tokens = useAsync(() => unwrap(api.GET("/api/tokens")), "tokens");
  const [name, setName] = useState("");
  const [days, setDays] = useState<number>(30);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const answer = await unwrap(
        api.POST("/api/tokens", { body: { name: name.trim(), expires_in_days: days === 0 ? null : days } }),
      );
      setCreated(answer.token);
      setName("");
      tokens.reload();
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  const list = (tokens.data ?? []).filter((token) => token.name !== "login");
  return (
    <section className="form-section" aria-labelledby="tokens-title">
      <h2 id="tokens-title">{t("account.tokensTitle")}</h2>
      <p className="hint" data-testid="tokens-intro">
        <Trans i18nKey="account.tokensIntro" components={{ code: <code /> }} />
      </p>
      <form className="inline-form" onSubmit={create}>
        <label>
          {t("account.tokenName")}
          <input data-testid="token-name" required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t("account.tokenExpiry")}
          <select data-testid="token-expiry" value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {EXPIRY_CHOICES.map((choice) => (
              <option key={choice} value={choice}>
                {choice === 0 ? t("account.never") : t("account.days", { count: choice })}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" data-testid="token-create">
          {t("account.createToken")}
        </button>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="token-error">
          {error}
        </p>
      )}
      {created && (
        <div className="notice-box token-secret" role="status" data-testid="token-created">
          <p>{t("account.tokenShownOnce")}</p>
          <code data-testid="token-secret">{created}</code>{" "}
          <CopyButton testId="token-copy" text={() => created} />
          <button type="button" className="link" onClick={() => setCreated(null)}>
            {t("common.dismiss")}
          </button>
        </div>
      )}
      <ErrorNote error={tokens.error} />
      {list.length === 0 && !tokens.loading ? (
        <p className="empty">{t("account.noTokens")}</p>
      ) : (
        <ListTable testId="token-list">
          <thead>
            <tr>
              <th scope="col">{t("account.tokenName")}</th>
              <th scope="col">{t("account.created")}</th>
              <th scope="col">{t("account.expires")}</th>
              <th scope="col">
                <span className="visually-hidden">{t("agents.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((token) => (
              <tr key={token.id} data-testid={`token-row-${token.name}`}>
                <td>{token.name}</td>
                <td>{formatDateTime(token.created_at)}</td>
                <td>{token.expires_at ? formatDateTime(token.expires_at) : t("account.never")}</td>
                <td>
                  <div className="row-actions">
                    <button
                      type="button"
                      className="danger"
                      data-testid={`token-revoke-${token.name}`}
                      onClick={() => setRevoking(token)}
                    >
                      {t("account.revoke")}
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </ListTable>
      )}
      {revoking && (
        <ConfirmDeleteDialog
          title={t("account.revokeTitle", { name: revoking.name })}
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await unwrap(api.DELETE("/api/tokens/{id}", { params: { path: { id: revoking.id } } }));
            setRevoking(null);
            tokens.reload();
          }}
        >
          <p>{t("account.revokeBody")}</p>
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}
