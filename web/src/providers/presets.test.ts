import { describe, expect, test } from "vitest";
import { parseModels, PRESETS, suggestName } from "./presets";

describe("provider presets", () => {
  test("every common server is offered with a base URL ending in /v1", () => {
    const labels = PRESETS.map((p) => p.label);
    for (const label of ["OpenAI", "DeepSeek", "Ollama", "vLLM", "llama.cpp server", "LM Studio"]) {
      expect(labels).toContain(label);
    }
    expect(PRESETS.find((p) => p.id === "ollama")?.baseUrl).toBe("http://127.0.0.1:11434/v1");
    for (const preset of PRESETS) {
      expect(preset.baseUrl).toMatch(/^https?:\/\/[^/]+\/v1$/);
      expect(suggestName(preset.name)).toBe(preset.name);
    }
  });

  test("typed model lists are split by lines or commas, trimmed and unique", () => {
    expect(parseModels(" gpt-4o \n\n gpt-4o-mini, gpt-4o\nqwen2.5:7b ")).toEqual([
      "gpt-4o",
      "gpt-4o-mini",
      "qwen2.5:7b",
    ]);
  });

  test("a name is made to fit the server's rule", () => {
    expect(suggestName("My Local LLM!")).toBe("my-local-llm");
    expect(suggestName("--Ollama.Box")).toBe("ollama.box");
  });
});
