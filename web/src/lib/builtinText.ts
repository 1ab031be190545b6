/**
 * Built-in content in the UI's language: the built-in tools' descriptions, the built-in
 * `general-purpose` subagent, the built-in skills' descriptions and the first-run Assistant.
 * The server keeps (and the model reads) the English text; the UI shows the catalogue's
 * translation (`builtin.*`, `setup.assistant*` in the i18n files) only while the text is still
 * the built-in original, so anything a user changed is shown as they wrote it.
 */

import { currentLanguage } from "../i18n";
import { en } from "../i18n/en";
import { zhCN } from "../i18n/zh-CN";

type Texts = Readonly<Record<string, string>>;

const tree = () => (currentLanguage() === "zh-CN" ? zhCN : en);

/** `text` translated when it is exactly the English original of the same catalogue entry. */
function shown(text: string, original: string | undefined, translation: string | undefined): string {
  return original !== undefined && translation !== undefined && text === original ? translation : text;
}

const entry = (texts: Texts, key: string) => (Object.hasOwn(texts, key) ? texts[key] : undefined);

/** A built-in tool's description (`GET /api/tools`). */
export function toolDescription(name: string, description: string): string {
  return shown(description, entry(en.builtin.tools, name), entry(tree().builtin.tools, name));
}

/** A skill's description: a built-in skill's is translated. */
export function skillDescription(skill: { name: string; source: string; description: string }): string {
  if (skill.source !== "builtin") return skill.description;
  return shown(
    skill.description,
    entry(en.builtin.skills, skill.name),
    entry(tree().builtin.skills, skill.name),
  );
}

/** What an agent's name and description are matched by. */
export interface AgentLike {
  slug: string;
  name: string;
  description: string;
  is_builtin?: boolean;
  is_subagent?: boolean;
}

const GENERAL_PURPOSE = "general-purpose";
const ASSISTANT = "assistant";

/** The built-in subagent, or the first-run Assistant (created in either language). */
function defaults(agent: AgentLike): Array<{ name: string; description: string }> | null {
  if (agent.is_builtin && agent.slug === GENERAL_PURPOSE) return [en.builtin.generalPurpose];
  if (!agent.is_subagent && agent.slug === ASSISTANT) {
    return [en, zhCN].map((texts) => ({
      name: texts.setup.assistantName,
      description: texts.setup.assistantDescription,
    }));
  }
  return null;
}

function current(agent: AgentLike): { name: string; description: string } {
  const texts = tree();
  return agent.slug === GENERAL_PURPOSE
    ? texts.builtin.generalPurpose
    : { name: texts.setup.assistantName, description: texts.setup.assistantDescription };
}

/** An agent's name as the UI shows it. */
export function agentName(agent: AgentLike): string {
  const originals = defaults(agent);
  const original = originals?.find((d) => d.name === agent.name);
  return original ? current(agent).name : agent.name;
}

/** An agent's description as the UI shows it. */
export function agentDescription(agent: AgentLike): string {
  const originals = defaults(agent);
  const original = originals?.find((d) => d.description === agent.description);
  return original ? current(agent).description : agent.description;
}
