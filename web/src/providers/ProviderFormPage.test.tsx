import { act, fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { beforeEach, describe, expect, test, vi } from "vitest";
import type { ProviderView } from "../api/providers";
import i18n from "../i18n";
import { ProviderFormPage } from "./ProviderFormPage";

const providers = vi.hoisted(() => ({
  createProvider: vi.fn(),
  updateProvider: vi.fn(),
  patchProvider: vi.fn(),
  getProvider: vi.fn(),
  getModelSettings: vi.fn(),
  listModelsUnsaved: vi.fn(),
  refreshModels: vi.fn(),
  setDefaultModel: vi.fn(),
  testProvider: vi.fn(),
  testUnsaved: vi.fn(),
}));
vi.mock("../api/providers", () => providers);
vi.mock("../api/agents", () => ({ listChatAgents: async () => [{ id: "a1" }] }));

const REFUSED = {
  ok: false,
  model: "local-chat",
  error: {
    kind: "bad_key",
    message: "the provider `local` refused the API key: Incorrect API key provided.",
  },
};

const stored = (fields: Partial<ProviderView> = {}): ProviderView => ({
  id: "p1",
  name: "local",
  base_url: "http://127.0.0.1:9/v1",
  models: [],
  api_key_set: true,
  extra_header_names: [],
  kind: "openai-compatible",
  source: "database",
  read_only: false,
  agents_using: 0,
  ...fields,
});

function at(path: string) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route path="/providers/new" element={<ProviderFormPage />} />
        <Route path="/providers/:id" element={<ProviderFormPage />} />
        <Route path="/providers" element={<p data-testid="providers-page" />} />
        <Route path="/chat" element={<p data-testid="chat-page" />} />
      </Routes>
    </MemoryRouter>,
  );
}

const field = (id: string) => screen.getByTestId(id) as HTMLInputElement;
const type = (id: string, value: string) => fireEvent.change(field(id), { target: { value } });
const click = (id: string) => act(async () => fireEvent.click(screen.getByTestId(id)));

beforeEach(() => {
  for (const mock of Object.values(providers)) mock.mockReset();
  providers.getModelSettings.mockResolvedValue({ default_model: null, source: "none" });
  providers.getProvider.mockResolvedValue(stored());
});

describe("Test connection", () => {
  test("with an empty Models box, the provider's list fills it and the model tested is named", async () => {
    providers.testUnsaved.mockResolvedValue({
      ok: true,
      model: "local-chat",
      latency_ms: 12,
      models: ["local-chat", "local-code"],
    });
    at("/providers/new");
    await screen.findByTestId("provider-test");
    type("provider-name", "local");
    type("provider-url", "http://127.0.0.1:9/v1");
    await click("provider-test");
    expect(providers.testUnsaved).toHaveBeenCalledWith({
      name: "local",
      kind: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      models: [],
    });
    expect(field("provider-models").value).toBe("local-chat\nlocal-code");
    expect(screen.getByTestId("provider-test-ok").textContent).toBe(
      "Connected: local-chat, the first model the provider lists, answered in 12 ms.",
    );
    expect(screen.getByText(/Left empty, it is filled with the models the provider lists/)).toBeTruthy();
  });

  test("a wrong key is one sentence, in the page's language", async () => {
    providers.testUnsaved.mockResolvedValue(REFUSED);
    at("/providers/new");
    await screen.findByTestId("provider-test");
    type("provider-url", "http://127.0.0.1:9/v1");
    type("provider-models", "local-chat");
    await click("provider-test");
    expect(providers.testUnsaved.mock.calls[0]![0]).toMatchObject({ model: "local-chat" });
    expect(screen.getByTestId("provider-test-error").textContent).toBe("The provider refused the API key.");
    await act(() => i18n.changeLanguage("zh-CN"));
    expect(screen.getByTestId("provider-test-error").textContent).toBe("提供方拒绝了这个 API 密钥。");
  });
});

describe("Fetch from the provider", () => {
  test("on a new provider, asks with what is on screen and stores nothing", async () => {
    providers.listModelsUnsaved.mockResolvedValue({ ok: true, models: ["a", "b"] });
    at("/providers/new");
    await screen.findByTestId("provider-refresh");
    type("provider-url", "http://127.0.0.1:9/v1");
    type("provider-key", "sk-typed");
    await click("provider-refresh");
    expect(providers.listModelsUnsaved).toHaveBeenCalledWith({
      kind: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      api_key: "sk-typed",
    });
    expect(field("provider-models").value).toBe("a\nb");
    expect(providers.createProvider).not.toHaveBeenCalled();
    expect(providers.refreshModels).not.toHaveBeenCalled();
  });

  test("editing, uses the URL as edited and the stored key", async () => {
    providers.getProvider.mockResolvedValue(stored({ models: ["old"] }));
    providers.listModelsUnsaved.mockResolvedValue({ ok: true, models: ["new-model"] });
    at("/providers/p1");
    await screen.findByTestId("provider-refresh");
    type("provider-url", "http://127.0.0.1:10/v1");
    await click("provider-refresh");
    expect(providers.listModelsUnsaved).toHaveBeenCalledWith({
      name: "local",
      kind: "openai-compatible",
      base_url: "http://127.0.0.1:10/v1",
      provider_id: "p1",
    });
    expect(field("provider-models").value).toBe("new-model");
  });

  test("a failure is said once, next to the box; an unreachable provider by the URL asked", async () => {
    providers.listModelsUnsaved.mockResolvedValue({
      ok: false,
      error: { kind: "unreachable", message: "connection refused (at http://127.0.0.1:9/v1)" },
    });
    at("/providers/new");
    await screen.findByTestId("provider-refresh");
    type("provider-url", "http://127.0.0.1:9/v1");
    await click("provider-refresh");
    expect(screen.getByTestId("provider-fetch-error").textContent).toBe(
      "The provider could not be reached at http://127.0.0.1:9/v1.",
    );
  });
});

describe("Save and start chatting", () => {
  test("a wrong key keeps the saved provider's form, filled, with the error at once", async () => {
    providers.createProvider.mockResolvedValue(stored());
    providers.testProvider.mockResolvedValue(REFUSED);
    await i18n.changeLanguage("zh-CN");
    at("/providers/new?setup=1");
    await screen.findByTestId("provider-save");
    type("provider-name", "local");
    type("provider-url", "http://127.0.0.1:9/v1");
    type("provider-key", "sk-wrong");
    await click("provider-save");
    expect(providers.testProvider).toHaveBeenCalledWith("p1", undefined);
    expect(providers.setDefaultModel).not.toHaveBeenCalled();

    expect((await screen.findByTestId("provider-test-error")).textContent).toBe(
      "提供方拒绝了这个 API 密钥。",
    );
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("编辑 local");
    expect(field("provider-name").value).toBe("local");
    expect(field("provider-url").value).toBe("http://127.0.0.1:9/v1");
    expect(screen.getByTestId("provider-saved-untested").textContent).toMatch(/已保存/);
    expect(screen.getByTestId("provider-save").textContent).toBe("保存并开始聊天");
    expect(providers.getProvider).toHaveBeenCalledWith("p1");

    // Saving again updates that provider (never a second one) and, once it answers, chats.
    providers.updateProvider.mockResolvedValue(stored());
    providers.testProvider.mockResolvedValue({
      ok: true,
      model: "local-chat",
      latency_ms: 3,
      models: ["local-chat"],
    });
    providers.patchProvider.mockResolvedValue(stored({ models: ["local-chat"] }));
    type("provider-key", "sk-right");
    await click("provider-save");
    expect(providers.createProvider).toHaveBeenCalledTimes(1);
    expect(providers.updateProvider.mock.calls[0]![0]).toBe("p1");
    expect(providers.patchProvider).toHaveBeenCalledWith("p1", { models: ["local-chat"] });
    expect(providers.setDefaultModel).toHaveBeenCalledWith("local/local-chat");
    expect(await screen.findByTestId("chat-page")).toBeTruthy();
  });
});

describe("Prices", () => {
  test("both prices are written as `prices`; one without the other is refused in the form", async () => {
    providers.createProvider.mockResolvedValue(stored({ models: ["local-chat"] }));
    at("/providers/new");
    await screen.findByTestId("provider-save");
    type("provider-name", "local");
    type("provider-url", "http://127.0.0.1:9/v1");
    type("provider-models", "local-chat");
    type("provider-price-input", "2.5");
    await click("provider-save");
    expect(providers.createProvider).not.toHaveBeenCalled();
    expect(screen.getByTestId("error-price-output").textContent).toBe("Set both prices, or neither.");
    expect(field("provider-price-output").getAttribute("aria-invalid")).toBe("true");

    type("provider-price-output", "lots");
    expect(screen.getByTestId("error-price-output").textContent).toBe(
      "A price is a number from 0 to 1,000,000.",
    );
    type("provider-price-output", "10");
    expect(screen.queryByTestId("error-price-output")).toBeNull();
    await click("provider-save");
    expect(providers.createProvider).toHaveBeenCalledWith(
      expect.objectContaining({ name: "local", prices: { input: 2.5, output: 10 } }),
    );
  });

  test("editing shows the stored prices; cleared, they are removed (null)", async () => {
    providers.getProvider.mockResolvedValue(stored({ prices: { input: 0.27, output: 1.1 } }));
    providers.updateProvider.mockResolvedValue(stored());
    await i18n.changeLanguage("zh-CN");
    at("/providers/p1");
    await screen.findByTestId("provider-save");
    expect(screen.getByLabelText("每百万输入令牌价格")).toBe(field("provider-price-input"));
    expect(field("provider-price-input").value).toBe("0.27");
    expect(field("provider-price-output").value).toBe("1.1");
    type("provider-price-input", "");
    type("provider-price-output", "");
    await click("provider-save");
    expect(providers.updateProvider).toHaveBeenCalledWith("p1", expect.objectContaining({ prices: null }));
  });

  test("a provider without prices saved without any sends none", async () => {
    providers.updateProvider.mockResolvedValue(stored());
    at("/providers/p1");
    await screen.findByTestId("provider-save");
    await click("provider-save");
    expect(providers.updateProvider.mock.calls[0]![1]).not.toHaveProperty("prices");
  });
});
