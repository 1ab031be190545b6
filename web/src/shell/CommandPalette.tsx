import { useId, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { useLocation, useNavigate, useSearchParams } from "react-router-dom";
import { api, unwrap } from "../api";
import { listChatAgents } from "../api/agents";
import { useUser } from "../auth/AuthContext";
import { Dialog } from "../components/Dialog";
import { useAsync } from "../lib/useAsync";
import { paletteKeys } from "./keys";
import { filterItems, paletteItems, type PaletteItem, type PalettePage } from "./palette";

interface CommandPaletteProps {
  onClose: () => void;
  /** Opens the list of keyboard shortcuts (the palette closes first). */
  onShortcuts: () => void;
}

/** The open thread's id, from `/chat/<id>` (not the draft at `/chat/new`). */
function openThreadId(pathname: string): string | undefined {
  const id = /^\/chat\/([^/]+)$/.exec(pathname)?.[1];
  return id && id !== "new" ? id : undefined;
}

/**
 * Ctrl+K / ⌘K: a search box over the pages, New thread and the agents' chats. The arrow keys
 * move through what matches, Enter goes there, Escape closes (focus goes back where it was).
 */
export function CommandPalette({ onClose, onShortcuts }: CommandPaletteProps) {
  const { t } = useTranslation();
  const user = useUser();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const [search] = useSearchParams();
  const listId = useId();
  const agents = useAsync(listChatAgents, "palette-agents");
  // New thread keeps the agent in use, as the chat's button does: the open thread's agent…
  const threadId = openThreadId(pathname);
  const thread = useAsync(
    () =>
      threadId
        ? unwrap(api.GET("/api/threads/{id}", { params: { path: { id: threadId } } }))
        : Promise.resolve(null),
    `palette-thread:${threadId ?? ""}`,
  );
  // … or the draft's.
  const draftSlug = pathname === "/chat/new" ? search.get("agent") : null;
  const currentAgentId =
    thread.data?.agent_id ?? agents.data?.find((agent) => agent.slug === draftSlug)?.id ?? undefined;

  const pages: PalettePage[] = [
    { to: "/chat", label: t("nav.chat") },
    { to: "/providers", label: t("nav.providers"), adminOnly: true },
    { to: "/agents", label: t("nav.agents") },
    { to: "/skills", label: t("nav.skills") },
    { to: "/mcp-servers", label: t("nav.mcpServers") },
    { to: "/knowledge", label: t("nav.knowledge") },
    { to: "/usage", label: t("nav.usage") },
    { to: "/admin/users", label: t("nav.users"), adminOnly: true },
    { to: "/account", label: t("userMenu.account") },
  ];
  const items = paletteItems({
    pages,
    isAdmin: user.role === "admin",
    agents: agents.data ?? [],
    currentAgentId,
    words: {
      newThread: t("threads.newThread"),
      chatWith: (name) => t("palette.chatWith", { name }),
      shortcuts: t("shortcuts.title"),
    },
  });
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const shown = filterItems(items, query);
  const activeAt = Math.min(active, Math.max(shown.length - 1, 0));
  const optionId = (item: PaletteItem) => `${listId}-${item.id.replace(/[^\w-]/g, "_")}`;

  function choose(item: PaletteItem | undefined) {
    if (!item) return;
    if (item.action === "shortcuts") {
      onShortcuts();
      return;
    }
    onClose();
    if (item.to) navigate(item.to);
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    const last = shown.length - 1;
    const moves: Record<string, number> = {
      ArrowDown: activeAt >= last ? 0 : activeAt + 1,
      ArrowUp: activeAt <= 0 ? last : activeAt - 1,
      Home: 0,
      End: last,
    };
    if (event.key in moves && shown.length > 0) {
      event.preventDefault();
      setActive(moves[event.key]!);
      document.getElementById(optionId(shown[moves[event.key]!]!))?.scrollIntoView?.({ block: "nearest" });
    } else if (event.key === "Enter" && !event.nativeEvent.isComposing) {
      event.preventDefault();
      choose(shown[activeAt]);
    }
  }

  const kindLabel = { page: t("palette.page"), action: t("palette.action"), agent: t("palette.agent") };
  return (
    <Dialog title={t("palette.title")} onClose={onClose} testId="command-palette">
      <input
        type="text"
        role="combobox"
        className="palette-search"
        data-testid="palette-search"
        aria-label={t("palette.search")}
        aria-expanded="true"
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={shown[activeAt] ? optionId(shown[activeAt]) : undefined}
        placeholder={t("palette.placeholder")}
        autoComplete="off"
        spellCheck={false}
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
      />
      <ul id={listId} role="listbox" className="palette-list" aria-label={t("palette.results")}>
        {shown.map((item, at) => (
          <li
            key={item.id}
            id={optionId(item)}
            role="option"
            aria-selected={at === activeAt}
            className={at === activeAt ? "palette-item active" : "palette-item"}
            data-testid="palette-item"
            data-kind={item.kind}
            // The box keeps the focus: a click chooses, without taking it away first.
            onMouseDown={(e) => e.preventDefault()}
            onMouseMove={() => at !== activeAt && setActive(at)}
            onClick={() => choose(item)}
          >
            <span className="palette-label">{item.label}</span>
            {item.hint && item.kind !== "page" && <span className="palette-hint">{item.hint}</span>}
            <span className="palette-kind">{kindLabel[item.kind]}</span>
          </li>
        ))}
      </ul>
      {shown.length === 0 && (
        <p className="empty" data-testid="palette-empty" role="status">
          {agents.loading && query ? t("common.loading") : t("palette.empty")}
        </p>
      )}
      <p className="palette-help muted">{t("palette.help", { keys: paletteKeys() })}</p>
    </Dialog>
  );
}
