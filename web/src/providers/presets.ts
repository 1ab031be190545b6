/** Common OpenAI-compatible servers: choosing one fills the base URL and a name. */
export interface Preset {
  id: string;
  label: string;
  name: string;
  baseUrl: string;
  /** Whether the server wants an API key. */
  needsKey: boolean;
  /** Models to start with when the server cannot list them. */
  models: string[];
}

export const PRESETS: readonly Preset[] = [
  {
    id: "openai",
    label: "OpenAI",
    name: "openai",
    baseUrl: "https://api.openai.com/v1",
    needsKey: true,
    models: ["gpt-4o-mini"],
  },
  {
    id: "deepseek",
    label: "DeepSeek",
    name: "deepseek",
    baseUrl: "https://api.deepseek.com/v1",
    needsKey: true,
    models: ["deepseek-chat", "deepseek-reasoner"],
  },
  {
    id: "ollama",
    label: "Ollama",
    name: "ollama",
    baseUrl: "http://127.0.0.1:11434/v1",
    needsKey: false,
    models: [],
  },
  {
    id: "vllm",
    label: "vLLM",
    name: "vllm",
    baseUrl: "http://127.0.0.1:8000/v1",
    needsKey: false,
    models: [],
  },
  {
    id: "llamacpp",
    label: "llama.cpp server",
    name: "llamacpp",
    baseUrl: "http://127.0.0.1:8080/v1",
    needsKey: false,
    models: [],
  },
  {
    id: "lmstudio",
    label: "LM Studio",
    name: "lmstudio",
    baseUrl: "http://127.0.0.1:1234/v1",
    needsKey: false,
    models: [],
  },
];

/** Model names typed one per line (or separated by commas), trimmed, without repeats. */
export function parseModels(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\n,]/)) {
    const name = part.trim();
    if (name) seen.add(name);
  }
  return [...seen];
}

/** A provider name from what the user typed: the server's rule is `[a-z0-9][a-z0-9._-]*`. */
export function suggestName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-._]+|-+$/g, "")
    .slice(0, 64);
}
