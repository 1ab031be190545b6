/**
 * Who is logged in. The token lives in the session (`api/session.ts`); this context holds the
 * user it belongs to, loads it at start (`GET /api/me`) and drops it when the session expires.
 */

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { api, session, unwrap } from "../api";
import type { User } from "../api/types";
import { restoreLanguage } from "../i18n";

interface AuthState {
  /** `undefined` while the stored token is being checked. */
  user: User | null | undefined;
  login: (username: string, password: string) => Promise<void>;
  logout: () => Promise<void>;
}

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | null | undefined>(session.token() ? undefined : null);

  useEffect(() => session.onExpire(() => setUser(null)), []);

  useEffect(() => {
    if (!session.token()) return;
    let live = true;
    unwrap(api.GET("/api/me"))
      .then((me) => {
        if (!live) return;
        void restoreLanguage(me.id);
        setUser(me);
      })
      .catch(() => live && setUser(null));
    return () => {
      live = false;
    };
  }, []);

  const login = useCallback(async (username: string, password: string) => {
    const answer = await unwrap(api.POST("/api/auth/login", { body: { username, password } }));
    session.start(answer.token);
    await restoreLanguage(answer.user.id);
    setUser(answer.user);
  }, []);

  const logout = useCallback(async () => {
    // Revoking is best effort: the token is forgotten here either way.
    await unwrap(api.POST("/api/auth/logout")).catch(() => undefined);
    session.clear();
    setUser(null);
  }, []);

  const value = useMemo(() => ({ user, login, logout }), [user, login, logout]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error("useAuth outside AuthProvider");
  return state;
}

/** The logged-in user; only for pages behind `RequireAuth`. */
export function useUser(): User {
  const { user } = useAuth();
  if (!user) throw new Error("useUser without a logged-in user");
  return user;
}
