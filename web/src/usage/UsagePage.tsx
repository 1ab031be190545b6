import { useId } from "react";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router-dom";
import { getUsage, type UsageLine, type UsageReport } from "../api/usage";
import { useUser } from "../auth/AuthContext";
import { ListTable } from "../components/ListTable";
import { ErrorNote, Loading } from "../components/LoadState";
import { formatNumber } from "../lib/format";
import { useAsync } from "../lib/useAsync";
import {
  DEFAULT_PRESET,
  formatCost,
  formatDay,
  MAX_DAYS,
  PRESETS,
  presetRange,
  rangeProblem,
  type Range,
} from "./range";
import { UsageChart } from "./UsageChart";

/**
 * `/usage`: the tokens the user's runs spent (every user's, for an admin who asks) and what they
 * cost where the provider has prices, per day, agent, subagent, model and user. The period is
 * in the address: `?days=7|30|90`, or `?from=…&to=…`; `&all=1` for every user.
 */
export function UsagePage() {
  const { t } = useTranslation();
  const user = useUser();
  const isAdmin = user.role === "admin";
  const [params, setParams] = useSearchParams();
  const custom = params.has("from") || params.has("to");
  const preset = PRESETS.find((days) => String(days) === params.get("days")) ?? DEFAULT_PRESET;
  const range: Range = custom
    ? { from: params.get("from") ?? "", to: params.get("to") ?? "" }
    : presetRange(preset);
  const all = isAdmin && params.get("all") === "1";
  const problem = custom ? rangeProblem(range) : null;
  const report = useAsync(
    () => (problem ? Promise.resolve(null) : getUsage({ ...range, all })),
    `${range.from}:${range.to}:${all}:${problem ?? ""}`,
  );
  const fromId = useId();
  const toId = useId();

  /** Changes the address's parameters, keeping the others (Back is not a history of each click). */
  function update(change: (next: URLSearchParams) => void) {
    const next = new URLSearchParams(params);
    change(next);
    setParams(next, { replace: true });
  }
  const choosePreset = (days: number) =>
    update((next) => {
      next.delete("from");
      next.delete("to");
      next.set("days", String(days));
    });
  const chooseCustom = () =>
    update((next) => {
      next.delete("days");
      next.set("from", range.from);
      next.set("to", range.to);
    });

  const data = report.data;
  return (
    <main className="page usage-page">
      <div className="page-head">
        <h1>{t("usagePage.title")}</h1>
      </div>
      <p className="hint page-intro">{all ? t("usagePage.introAll") : t("usagePage.intro")}</p>
      <div className="usage-controls">
        <div className="usage-presets" role="group" aria-label={t("usagePage.range")}>
          {PRESETS.map((days) => (
            <button
              key={days}
              type="button"
              data-testid={`usage-range-${days}`}
              aria-pressed={!custom && preset === days}
              onClick={() => choosePreset(days)}
            >
              {t("usagePage.lastDays", { count: days })}
            </button>
          ))}
          <button type="button" data-testid="usage-range-custom" aria-pressed={custom} onClick={chooseCustom}>
            {t("usagePage.custom")}
          </button>
        </div>
        {custom && (
          <div className="usage-dates">
            <label htmlFor={fromId}>{t("usagePage.from")}</label>
            <input
              id={fromId}
              type="date"
              data-testid="usage-from"
              value={range.from}
              max={range.to || undefined}
              aria-invalid={problem != null && problem !== "tooLong" ? true : undefined}
              onChange={(e) => update((next) => next.set("from", e.target.value))}
            />
            <label htmlFor={toId}>{t("usagePage.to")}</label>
            <input
              id={toId}
              type="date"
              data-testid="usage-to"
              value={range.to}
              min={range.from || undefined}
              aria-invalid={problem != null ? true : undefined}
              onChange={(e) => update((next) => next.set("to", e.target.value))}
            />
          </div>
        )}
        {isAdmin && (
          <label className="check usage-all">
            <input
              type="checkbox"
              data-testid="usage-all"
              checked={all}
              onChange={(e) =>
                update((next) => (e.target.checked ? next.set("all", "1") : next.delete("all")))
              }
            />
            {t("usagePage.allUsers")}
          </label>
        )}
      </div>
      {problem && (
        <p className="error" role="alert" data-testid="usage-range-error">
          {t(`usagePage.problem.${problem}`, { max: MAX_DAYS })}
        </p>
      )}
      <ErrorNote error={report.error} testId="usage-error" />
      {problem ? null : report.loading && !data ? (
        <Loading text={t("usagePage.loading")} />
      ) : data ? (
        <Report report={data} busy={report.loading} />
      ) : null}
    </main>
  );
}

function Report({ report, busy }: { report: UsageReport; busy: boolean }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.resolvedLanguage ?? "en";
  const { total } = report;
  const span = t("usagePage.span", {
    from: formatDay(report.from, locale, true),
    to: formatDay(report.to, locale, true),
  });
  if (total.runs === 0) {
    return (
      <>
        <p className="usage-span">{span}</p>
        <p className="empty" data-testid="usage-empty">
          {t("usagePage.empty")}
        </p>
      </>
    );
  }
  const stats: [string, string, string][] = [
    ["runs", t("usagePage.totals.runs"), formatNumber(total.runs)],
    ["input", t("usagePage.totals.input"), formatNumber(total.prompt_tokens)],
    ["output", t("usagePage.totals.output"), formatNumber(total.completion_tokens)],
    ["total", t("usagePage.totals.total"), formatNumber(total.total_tokens)],
    ["cost", t("usagePage.totals.cost"), total.cost != null ? formatCost(total.cost, locale) : "—"],
  ];
  return (
    <div className="usage-report" aria-busy={busy} data-testid="usage-report">
      <section aria-labelledby="usage-totals-title">
        <h2 id="usage-totals-title" className="visually-hidden">
          {t("usagePage.totals.title")}
        </h2>
        <p className="usage-span">{span}</p>
        <dl className="usage-totals" data-testid="usage-totals">
          {stats.map(([key, label, value]) => (
            <div key={key} className="usage-stat">
              <dt>{label}</dt>
              <dd data-testid={`usage-total-${key}`}>{value}</dd>
            </div>
          ))}
        </dl>
        <CostNote line={total} />
      </section>
      <UsageChart days={report.by_day} />
      <UsageTable
        testId="usage-agents"
        title={t("usagePage.tables.agents")}
        nameColumn={t("usagePage.columns.agent")}
        lines={report.by_agent}
      />
      <UsageTable
        testId="usage-subagents"
        title={t("usagePage.tables.subagents")}
        nameColumn={t("usagePage.columns.subagent")}
        lines={report.by_subagent}
      />
      <UsageTable
        testId="usage-models"
        title={t("usagePage.tables.models")}
        nameColumn={t("usagePage.columns.model")}
        lines={report.by_model}
      />
      {report.all_users && (
        <UsageTable
          testId="usage-users"
          title={t("usagePage.tables.users")}
          nameColumn={t("usagePage.columns.user")}
          lines={report.by_user}
        />
      )}
    </div>
  );
}

/** Under the totals: no price at all, or some tokens left out of the cost. */
function CostNote({ line }: { line: UsageLine }) {
  const { t } = useTranslation();
  if (line.cost == null) {
    return (
      <p className="hint" data-testid="usage-cost-note">
        {t("usagePage.costNone")}
      </p>
    );
  }
  return (
    <div data-testid="usage-cost-note">
      <p className="hint">{t("usagePage.costCurrency")}</p>
      {line.unpriced_tokens > 0 && (
        <p className="hint">
          {t("usagePage.unpriced", {
            count: line.unpriced_tokens,
            tokens: formatNumber(line.unpriced_tokens),
          })}
        </p>
      )}
    </div>
  );
}

interface UsageTableProps {
  testId: string;
  title: string;
  nameColumn: string;
  lines: readonly UsageLine[];
}

function UsageTable({ testId, title, nameColumn, lines }: UsageTableProps) {
  const { t, i18n } = useTranslation();
  const locale = i18n.resolvedLanguage ?? "en";
  const headingId = useId();
  const partial = lines.some((line) => line.cost != null && line.unpriced_tokens > 0);
  return (
    <section className="usage-section" aria-labelledby={headingId} data-testid={testId}>
      <h2 id={headingId}>{title}</h2>
      {lines.length === 0 ? (
        <p className="empty">{t("usagePage.noneInTable")}</p>
      ) : (
        <>
          <ListTable className="usage-table">
            <thead>
              <tr>
                <th scope="col">{nameColumn}</th>
                <th scope="col" className="num">
                  {t("usagePage.columns.runs")}
                </th>
                <th scope="col" className="num">
                  {t("usagePage.columns.input")}
                </th>
                <th scope="col" className="num">
                  {t("usagePage.columns.output")}
                </th>
                <th scope="col" className="num">
                  {t("usagePage.columns.total")}
                </th>
                <th scope="col" className="num">
                  {t("usagePage.columns.cost")}
                </th>
              </tr>
            </thead>
            <tbody>
              {lines.map((line) => (
                <tr key={line.key} data-testid="usage-row" data-key={line.key}>
                  <th scope="row">{line.label || line.key || t("usagePage.noModel")}</th>
                  <td className="num">{formatNumber(line.runs)}</td>
                  <td className="num">{formatNumber(line.prompt_tokens)}</td>
                  <td className="num">{formatNumber(line.completion_tokens)}</td>
                  <td className="num">{formatNumber(line.total_tokens)}</td>
                  <td className="num" data-testid="usage-cost">
                    {line.cost == null ? (
                      <span title={t("usagePage.noPrice")}>
                        <span aria-hidden="true">—</span>
                        <span className="visually-hidden">{t("usagePage.noPrice")}</span>
                      </span>
                    ) : (
                      <>
                        {formatCost(line.cost, locale)}
                        {line.unpriced_tokens > 0 && (
                          <sup className="usage-partial" title={t("usagePage.partial")}>
                            *
                          </sup>
                        )}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </ListTable>
          {partial && <p className="hint">* {t("usagePage.partial")}</p>}
        </>
      )}
    </section>
  );
}
