import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api, errorMessage, unwrap } from "../api";
import { useUser } from "../auth/AuthContext";
import { Dialog } from "../components/Dialog";
import { ListTable } from "../components/ListTable";
import { Loading } from "../components/LoadState";
import { formatDateTime } from "../lib/format";
import { useAsync } from "../lib/useAsync";

type Role = "admin" | "user";

type UserRow = Awaited<ReturnType<typeof listUsers>>[number];
const listUsers = () => unwrap(api.GET("/api/users"));

/** `/admin/users` (admins): every account; create, change role, disable, reset a password. */
export function UsersPage() {
  const { t } = useTranslation();
  const me = useUser();
  const users = useAsync(listUsers, "users");
  const [error, setError] = useState<string | null>(null);
  const [resetting, setResetting] = useState<UserRow | null>(null);

  async function patch(user: UserRow, body: { role?: Role; disabled?: boolean }) {
    setError(null);
    try {
      await unwrap(api.PATCH("/api/users/{id}", { params: { path: { id: user.id } }, body }));
      users.reload();
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  if (me.role !== "admin") {
    return (
      <main className="page">
        <p className="error" role="alert">
          {t("users.adminOnly")}
        </p>
      </main>
    );
  }

  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("users.title")}</h1>
      </div>
      <CreateUser onCreated={() => users.reload()} />
      {(error ?? (users.error != null ? errorMessage(users.error) : null)) && (
        <p className="error" role="alert" data-testid="users-error">
          {error ?? errorMessage(users.error)}
        </p>
      )}
      {users.loading && !users.data ? (
        <Loading />
      ) : (
        <ListTable testId="user-list">
          <thead>
            <tr>
              <th scope="col">{t("users.username")}</th>
              <th scope="col">{t("users.role")}</th>
              <th scope="col">{t("users.state")}</th>
              <th scope="col" className="wide-only">
                {t("users.created")}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t("agents.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(users.data ?? []).map((user) => {
              const self = user.id === me.id;
              return (
                <tr key={user.id} data-testid={`user-row-${user.username}`}>
                  <td>
                    {user.username} {self && <span className="badge muted">{t("users.you")}</span>}
                  </td>
                  <td>
                    <select
                      aria-label={t("users.roleOf", { name: user.username })}
                      data-testid={`user-role-${user.username}`}
                      value={user.role ?? "user"}
                      disabled={self}
                      onChange={(e) => void patch(user, { role: e.target.value as Role })}
                    >
                      <option value="user">{t("roles.user")}</option>
                      <option value="admin">{t("roles.admin")}</option>
                    </select>
                  </td>
                  <td>
                    {user.disabled ? (
                      <span className="status error" data-testid={`user-state-${user.username}`}>
                        {t("users.disabled")}
                      </span>
                    ) : (
                      <span className="status success" data-testid={`user-state-${user.username}`}>
                        {t("users.active")}
                      </span>
                    )}
                  </td>
                  <td className="wide-only">{user.created_at ? formatDateTime(user.created_at) : "—"}</td>
                  <td>
                    <div className="row-actions">
                      <button
                        type="button"
                        data-testid={`user-toggle-${user.username}`}
                        className={user.disabled ? undefined : "danger"}
                        disabled={self}
                        onClick={() => void patch(user, { disabled: !user.disabled })}
                      >
                        {user.disabled ? t("users.enable") : t("users.disable")}
                      </button>
                      <button
                        type="button"
                        data-testid={`user-reset-${user.username}`}
                        onClick={() => setResetting(user)}
                      >
                        {t("users.resetPassword")}
                      </button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </ListTable>
      )}
      <p className="hint">{t("users.disableHint")}</p>
      {resetting && <ResetPassword user={resetting} onClose={() => setResetting(null)} />}
    </main>
  );
}

function CreateUser({ onCreated }: { onCreated: () => void }) {
  const { t } = useTranslation();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("user");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setDone(null);
    try {
      const created = await unwrap(
        api.POST("/api/users", { body: { username: username.trim(), password, role } }),
      );
      setDone(t("users.createdUser", { name: created.username }));
      setUsername("");
      setPassword("");
      onCreated();
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  return (
    <section className="form-section" aria-labelledby="new-user-title">
      <h2 id="new-user-title">{t("users.newUser")}</h2>
      <form className="inline-form" onSubmit={submit}>
        <label>
          {t("users.username")}
          <input
            data-testid="new-user-name"
            autoComplete="off"
            required
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
        </label>
        <label>
          {t("users.initialPassword")}
          <input
            data-testid="new-user-password"
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <label>
          {t("users.role")}
          <select data-testid="new-user-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="user">{t("roles.user")}</option>
            <option value="admin">{t("roles.admin")}</option>
          </select>
        </label>
        <button type="submit" className="primary" data-testid="new-user-create">
          {t("users.create")}
        </button>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="new-user-error">
          {error}
        </p>
      )}
      {done && (
        <p className="success" role="status" data-testid="new-user-done">
          {done}
        </p>
      )}
    </section>
  );
}

function ResetPassword({ user, onClose }: { user: UserRow; onClose: () => void }) {
  const { t } = useTranslation();
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await unwrap(
        api.POST("/api/users/{id}/password", {
          params: { path: { id: user.id } },
          body: { new_password: password },
        }),
      );
      setDone(true);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  return (
    <Dialog
      title={t("users.resetTitle", { name: user.username })}
      onClose={onClose}
      testId="reset-password"
      actions={
        <>
          <button type="button" onClick={onClose}>
            {t("common.close")}
          </button>
          {!done && (
            <button
              type="submit"
              form="reset-password-form"
              className="primary"
              data-testid="reset-password-save"
            >
              {t("users.resetPassword")}
            </button>
          )}
        </>
      }
    >
      {done ? (
        <p className="success" role="status" data-testid="reset-password-done">
          {t("users.resetDone", { name: user.username })}
        </p>
      ) : (
        <form id="reset-password-form" className="stack-form" onSubmit={submit}>
          <label>
            {t("account.newPassword")}
            <input
              type="password"
              autoComplete="new-password"
              data-testid="reset-password-input"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <p className="hint">{t("users.resetHint")}</p>
          {error && (
            <p className="error" role="alert" data-testid="reset-password-error">
              {error}
            </p>
          )}
        </form>
      )}
    </Dialog>
  );
}
