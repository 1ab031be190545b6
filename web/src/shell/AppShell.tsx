import { NavLink, Outlet } from "react-router-dom";
import { UserMenu } from "./UserMenu";

export function AppShell() {
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">ARS</span>
        <nav aria-label="Main">
          <NavLink to="/chat" data-testid="nav-chat">
            Chat
          </NavLink>
          <NavLink to="/agents" data-testid="nav-agents">
            Agents
          </NavLink>
          <NavLink to="/skills" data-testid="nav-skills">
            Skills
          </NavLink>
        </nav>
        <UserMenu />
      </header>
      <Outlet />
    </div>
  );
}
