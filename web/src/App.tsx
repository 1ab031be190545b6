import { BrowserRouter, Navigate, Route, Routes } from "react-router-dom";
import { AccountPage } from "./account/AccountPage";
import { UsersPage } from "./admin/UsersPage";
import { ProviderFormPage } from "./providers/ProviderFormPage";
import { ProvidersPage } from "./providers/ProvidersPage";
import { AgentFormPage } from "./agents/AgentFormPage";
import { AgentsPage } from "./agents/AgentsPage";
import { AuthProvider } from "./auth/AuthContext";
import { LoginPage } from "./auth/LoginPage";
import { RequireAuth } from "./auth/RequireAuth";
import { ChatPage } from "./chat/ChatPage";
import { AppShell } from "./shell/AppShell";
import { SkillDetailPage } from "./skills/SkillDetailPage";
import { SkillsPage } from "./skills/SkillsPage";

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        element={
          <RequireAuth>
            <AppShell />
          </RequireAuth>
        }
      >
        <Route path="/chat" element={<ChatPage />} />
        <Route path="/chat/:threadId" element={<ChatPage />} />
        <Route path="/agents" element={<AgentsPage />} />
        <Route path="/agents/new" element={<AgentFormPage />} />
        <Route path="/agents/:id" element={<AgentFormPage />} />
        <Route path="/skills" element={<SkillsPage />} />
        <Route path="/skills/:id" element={<SkillDetailPage />} />
        <Route path="/providers" element={<ProvidersPage />} />
        <Route path="/providers/new" element={<ProviderFormPage />} />
        <Route path="/providers/:id" element={<ProviderFormPage />} />
        <Route path="/account" element={<AccountPage />} />
        <Route path="/admin/users" element={<UsersPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/chat" replace />} />
    </Routes>
  );
}

export function App() {
  return (
    <BrowserRouter>
      <AuthProvider>
        <AppRoutes />
      </AuthProvider>
    </BrowserRouter>
  );
}
