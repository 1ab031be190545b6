import { lazy } from "react";
import { BrowserRouter, Navigate, Route, Routes } from "react-router-dom";
import { AuthProvider } from "./auth/AuthContext";
import { LoginPage } from "./auth/LoginPage";
import { RequireAuth } from "./auth/RequireAuth";
import { ChatPage } from "./chat/ChatPage";
import { AppShell } from "./shell/AppShell";
import { NotFoundPage } from "./shell/NotFoundPage";

// The chat is what most visits open; the other pages load on first use (the shell's Suspense
// shows while they do).
const AccountPage = lazy(() => import("./account/AccountPage").then((m) => ({ default: m.AccountPage })));
const UsersPage = lazy(() => import("./admin/UsersPage").then((m) => ({ default: m.UsersPage })));
const ProviderFormPage = lazy(() =>
  import("./providers/ProviderFormPage").then((m) => ({ default: m.ProviderFormPage })),
);
const ProvidersPage = lazy(() =>
  import("./providers/ProvidersPage").then((m) => ({ default: m.ProvidersPage })),
);
const AgentFormPage = lazy(() =>
  import("./agents/AgentFormPage").then((m) => ({ default: m.AgentFormPage })),
);
const AgentsPage = lazy(() => import("./agents/AgentsPage").then((m) => ({ default: m.AgentsPage })));
const SkillDetailPage = lazy(() =>
  import("./skills/SkillDetailPage").then((m) => ({ default: m.SkillDetailPage })),
);
const McpServerDetailPage = lazy(() =>
  import("./mcp/McpServerDetailPage").then((m) => ({ default: m.McpServerDetailPage })),
);
const McpServerFormPage = lazy(() =>
  import("./mcp/McpServerFormPage").then((m) => ({ default: m.McpServerFormPage })),
);
const McpServersPage = lazy(() =>
  import("./mcp/McpServersPage").then((m) => ({ default: m.McpServersPage })),
);
const KnowledgeBasesPage = lazy(() =>
  import("./knowledge/KnowledgeBasesPage").then((m) => ({ default: m.KnowledgeBasesPage })),
);
const KnowledgeBaseDetailPage = lazy(() =>
  import("./knowledge/KnowledgeBaseDetailPage").then((m) => ({ default: m.KnowledgeBaseDetailPage })),
);
const KnowledgeBaseFormPage = lazy(() =>
  import("./knowledge/KnowledgeBaseFormPage").then((m) => ({ default: m.KnowledgeBaseFormPage })),
);
const SkillsPage = lazy(() => import("./skills/SkillsPage").then((m) => ({ default: m.SkillsPage })));
const UsagePage = lazy(() => import("./usage/UsagePage").then((m) => ({ default: m.UsagePage })));

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/" element={<Navigate to="/chat" replace />} />
      <Route
        element={
          <RequireAuth>
            <AppShell />
          </RequireAuth>
        }
      >
        <Route path="/chat" element={<ChatPage />} />
        <Route path="/chat/new" element={<ChatPage />} />
        <Route path="/chat/:threadId" element={<ChatPage />} />
        <Route path="/agents" element={<AgentsPage />} />
        <Route path="/agents/new" element={<AgentFormPage />} />
        <Route path="/agents/:id" element={<AgentFormPage />} />
        <Route path="/skills" element={<SkillsPage />} />
        <Route path="/skills/:id" element={<SkillDetailPage />} />
        <Route path="/mcp-servers" element={<McpServersPage />} />
        <Route path="/mcp-servers/new" element={<McpServerFormPage />} />
        <Route path="/mcp-servers/:id" element={<McpServerDetailPage />} />
        <Route path="/mcp-servers/:id/edit" element={<McpServerFormPage />} />
        <Route path="/knowledge" element={<KnowledgeBasesPage />} />
        <Route path="/knowledge/new" element={<KnowledgeBaseFormPage />} />
        <Route path="/knowledge/:id" element={<KnowledgeBaseDetailPage />} />
        <Route path="/knowledge/:id/edit" element={<KnowledgeBaseFormPage />} />
        <Route path="/providers" element={<ProvidersPage />} />
        <Route path="/providers/new" element={<ProviderFormPage />} />
        <Route path="/providers/:id" element={<ProviderFormPage />} />
        <Route path="/usage" element={<UsagePage />} />
        <Route path="/account" element={<AccountPage />} />
        <Route path="/admin/users" element={<UsersPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
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
