import { act, fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { beforeEach, describe, expect, test, vi } from "vitest";
import type { UsageLine, UsageReport } from "../api/usage";
import i18n from "../i18n";
import { UsagePage } from "./UsagePage";

const user = vi.hoisted(() => ({ id: "u1", username: "ada", role: "user" }));
vi.mock("../auth/AuthContext", () => ({ useUser: () => user }));
const usage = vi.hoisted(() => ({ getUsage: vi.fn() }));
vi.mock("../api/usage", () => usage);

const line = (
  key: string,
  label: string,
  prompt: number,
  completion: number,
  extra: Partial<UsageLine> = {},
) => ({
  key,
  label,
  runs: 1,
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  unpriced_tokens: 0,
  ...extra,
});

function report(fields: Partial<UsageReport> = {}): UsageReport {
  return {
    from: "2025-03-01",
    to: "2025-03-03",
    all_users: false,
    total: line("", "", 13200, 1534, { runs: 3, cost: 0.0421, unpriced_tokens: 1234 }),
    by_day: [
      line("2025-03-01", "2025-03-01", 12000, 1500, { runs: 2 }),
      line("2025-03-02", "2025-03-02", 0, 0, { runs: 0 }),
      line("2025-03-03", "2025-03-03", 1200, 34),
    ],
    by_agent: [
      line("a1", "Writer", 12000, 1500, { runs: 2, cost: 0.0421 }),
      line("a2", "Coder", 1200, 34, { unpriced_tokens: 1234 }),
    ],
    by_subagent: [],
    by_model: [
      line("local/big", "local/big", 12000, 1500, { runs: 2, cost: 0.0421 }),
      line("scripted/scripted", "scripted/scripted", 1200, 34, { unpriced_tokens: 1234 }),
    ],
    by_user: [],
    ...fields,
  };
}

function at(path = "/usage") {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route path="/usage" element={<UsagePage />} />
      </Routes>
    </MemoryRouter>,
  );
}

const rows = (testId: string) =>
  within(screen.getByTestId(testId))
    .getAllByTestId("usage-row")
    .map((row) => [...row.querySelectorAll("th, td")].map((cell) => cell.textContent));

beforeEach(() => {
  usage.getUsage.mockReset();
  user.role = "user";
});

describe("the Usage page", () => {
  test("shows the totals, the chart and a table per agent, subagent and model (English)", async () => {
    usage.getUsage.mockResolvedValue(report());
    at();
    await screen.findByTestId("usage-report");
    expect(usage.getUsage).toHaveBeenCalledWith(expect.objectContaining({ all: false }));
    expect(screen.getByTestId("usage-total-runs").textContent).toBe("3");
    expect(screen.getByTestId("usage-total-input").textContent).toBe("13,200");
    expect(screen.getByTestId("usage-total-output").textContent).toBe("1,534");
    expect(screen.getByTestId("usage-total-total").textContent).toBe("14,734");
    expect(screen.getByTestId("usage-total-cost").textContent).toBe("0.042");
    expect(screen.getByTestId("usage-cost-note").textContent).toMatch(
      /1,234 tokens have no price and are left out of the cost/,
    );

    expect(rows("usage-agents")).toEqual([
      ["Writer", "2", "12,000", "1,500", "13,500", "0.042"],
      ["Coder", "1", "1,200", "34", "1,234", "—No price"],
    ]);
    expect(within(screen.getByTestId("usage-subagents")).getByText("None in this period.")).toBeTruthy();
    expect(rows("usage-models").map((row) => row[0])).toEqual(["local/big", "scripted/scripted"]);
    expect(screen.queryByTestId("usage-users")).toBeNull();

    const bars = screen.getAllByTestId("usage-bar");
    expect(bars.map((bar) => bar.getAttribute("data-tokens"))).toEqual(["13500", "0", "1234"]);
    expect(bars[0]!.querySelector("title")?.textContent).toBe(
      "Mar 1, 2025: 13,500 tokens (12,000 in, 1,500 out), 2 runs",
    );
    expect(screen.getByTestId("usage-chart-summary").textContent).toBe(
      "From Mar 1, 2025 to Mar 3, 2025: 14,734 tokens over 3 days; the busiest day was Mar 1, with 13,500 tokens.",
    );
    expect(screen.getByTestId("usage-chart-svg").getAttribute("role")).toBe("img");
    // Presets: 30 days by default; no All users switch for a user.
    expect(screen.getByTestId("usage-range-30").getAttribute("aria-pressed")).toBe("true");
    expect(screen.queryByTestId("usage-all")).toBeNull();
  });

  test("speaks Chinese, numbers in the Chinese locale", async () => {
    await i18n.changeLanguage("zh-CN");
    usage.getUsage.mockResolvedValue(report());
    at();
    await screen.findByTestId("usage-report");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("用量");
    expect(screen.getByTestId("usage-totals").textContent).toContain("输入令牌13,200");
    expect(screen.getByTestId("usage-cost-note").textContent).toContain(
      "有 1,234 个令牌未设置价格，未计入费用。",
    );
    expect(within(screen.getByTestId("usage-agents")).getByRole("heading").textContent).toBe("按智能体");
    expect(within(screen.getByTestId("usage-agents")).getByText("费用")).toBeTruthy();
    expect(rows("usage-agents")[1]).toEqual(["Coder", "1", "1,200", "34", "1,234", "—未定价"]);
    expect(screen.getByTestId("usage-chart-summary").textContent).toBe(
      "2025年3月1日 至 2025年3月3日：3 天内共 14,734 个令牌；用量最多的一天是 3月1日，共 13,500 个令牌。",
    );
    expect(screen.getByTestId("usage-range-7").textContent).toBe("最近 7 天");
  });

  test("a period without runs says so", async () => {
    usage.getUsage.mockResolvedValue(
      report({ total: line("", "", 0, 0, { runs: 0 }), by_day: [], by_agent: [], by_model: [] }),
    );
    at();
    expect((await screen.findByTestId("usage-empty")).textContent).toBe("No runs in this period.");
    expect(screen.queryByTestId("usage-chart")).toBeNull();
  });

  test("a failure is shown as an alert", async () => {
    usage.getUsage.mockRejectedValue(new Error("boom"));
    at();
    expect((await screen.findByTestId("usage-error")).getAttribute("role")).toBe("alert");
  });

  test("presets and a custom period ask for their days; a reversed period is not asked", async () => {
    usage.getUsage.mockResolvedValue(report());
    at();
    await screen.findByTestId("usage-report");
    await act(async () => fireEvent.click(screen.getByTestId("usage-range-7")));
    const last = usage.getUsage.mock.lastCall![0] as { from: string; to: string };
    expect((Date.parse(last.to) - Date.parse(last.from)) / 86_400_000).toBe(6);

    await act(async () => fireEvent.click(screen.getByTestId("usage-range-custom")));
    await act(async () =>
      fireEvent.change(screen.getByTestId("usage-from"), { target: { value: "2025-01-01" } }),
    );
    await act(async () =>
      fireEvent.change(screen.getByTestId("usage-to"), { target: { value: "2025-01-31" } }),
    );
    expect(usage.getUsage).toHaveBeenLastCalledWith({ from: "2025-01-01", to: "2025-01-31", all: false });

    const calls = usage.getUsage.mock.calls.length;
    await act(async () =>
      fireEvent.change(screen.getByTestId("usage-to"), { target: { value: "2024-12-31" } }),
    );
    expect(screen.getByTestId("usage-range-error").textContent).toBe(
      "The first day must not be after the last.",
    );
    expect(usage.getUsage).toHaveBeenCalledTimes(calls);
  });

  test("an admin can ask for every user's runs and gets a table per user", async () => {
    user.role = "admin";
    usage.getUsage.mockImplementation(async ({ all }: { all: boolean }) =>
      report(all ? { all_users: true, by_user: [line("u1", "ada", 13200, 1534, { runs: 3 })] } : {}),
    );
    at();
    await screen.findByTestId("usage-report");
    expect(screen.queryByTestId("usage-users")).toBeNull();
    await act(async () => fireEvent.click(screen.getByTestId("usage-all")));
    await screen.findByTestId("usage-users");
    expect(usage.getUsage).toHaveBeenLastCalledWith(expect.objectContaining({ all: true }));
    expect(rows("usage-users")).toEqual([["ada", "3", "13,200", "1,534", "14,734", "—No price"]]);
  });
});
