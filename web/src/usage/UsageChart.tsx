import { useId } from "react";
import { useTranslation } from "react-i18next";
import type { UsageLine } from "../api/usage";
import { formatNumber, usageText } from "../lib/format";
import { chartModel } from "./chartModel";
import { formatCompact, formatDay } from "./range";

interface UsageChartProps {
  /** The report's days, oldest first, days without runs included. */
  days: readonly UsageLine[];
}

/**
 * Tokens per day as bars (input below, output above), drawn as SVG: each day's column has a
 * tooltip (`<title>`), the axis is labelled, and screen readers get the chart as one sentence.
 */
export function UsageChart({ days }: UsageChartProps) {
  const { t, i18n } = useTranslation();
  const locale = i18n.resolvedLanguage ?? "en";
  const id = useId();
  const chart = chartModel(days);
  const { layout } = chart;
  const first = days[0]?.key ?? "";
  const last = days[days.length - 1]?.key ?? "";
  const total = days.reduce((sum, day) => sum + day.total_tokens, 0);
  const range = { from: formatDay(first, locale, true), to: formatDay(last, locale, true) };
  const summary = chart.peak
    ? t("usagePage.chart.summary", {
        ...range,
        tokens: tokensText(total),
        days: formatNumber(days.length),
        peak: formatDay(chart.peak.key, locale),
        peakTokens: tokensText(chart.peak.total_tokens),
      })
    : t("usagePage.chart.summaryEmpty", range);
  const yAxisX = layout.left - 8;

  return (
    <figure className="usage-chart" data-testid="usage-chart">
      <figcaption id={`${id}-caption`}>
        <span className="usage-chart-title">{t("usagePage.chart.title")}</span>
        <span className="usage-legend" aria-hidden="true">
          <span className="usage-swatch input" /> {t("usagePage.chart.input")}
          <span className="usage-swatch output" /> {t("usagePage.chart.output")}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="img"
        aria-labelledby={`${id}-caption ${id}-summary`}
        data-testid="usage-chart-svg"
      >
        <desc id={`${id}-summary`} data-testid="usage-chart-summary">
          {summary}
        </desc>
        <g className="usage-axis">
          {chart.ticks.map((tick) => (
            <g key={tick.value}>
              <line x1={layout.left} x2={layout.width - layout.right} y1={tick.y} y2={tick.y} />
              <text x={yAxisX} y={tick.y} textAnchor="end" dominantBaseline="middle">
                {formatCompact(tick.value, locale)}
              </text>
            </g>
          ))}
          {/* Level above the axis, not turned: a turned title reads badly in Chinese. */}
          <text className="usage-axis-title" x={yAxisX} y={layout.top - 12} textAnchor="end">
            {t("usagePage.chart.yAxis")}
          </text>
          {chart.labels.map((bar) => (
            <text key={bar.day} x={bar.slotX + bar.slotWidth / 2} y={chart.baseline + 16} textAnchor="middle">
              {formatDay(bar.day, locale)}
            </text>
          ))}
          <text
            className="usage-axis-title"
            x={layout.left + (layout.width - layout.left - layout.right) / 2}
            y={layout.height - 2}
            textAnchor="middle"
          >
            {t("usagePage.chart.xAxis")}
          </text>
        </g>
        {chart.bars.map((bar) => (
          <g
            key={bar.day}
            className="usage-bar"
            data-testid="usage-bar"
            data-day={bar.day}
            data-tokens={bar.line.total_tokens}
          >
            <title>
              {t("usagePage.chart.bar", {
                day: formatDay(bar.day, locale, true),
                tokens: usageText({
                  prompt_tokens: bar.line.prompt_tokens,
                  completion_tokens: bar.line.completion_tokens,
                }),
                runs: t("usagePage.runCount", { count: bar.line.runs, runs: formatNumber(bar.line.runs) }),
              })}
            </title>
            <rect
              className="usage-slot"
              x={bar.slotX}
              y={layout.top}
              width={bar.slotWidth}
              height={chart.baseline - layout.top}
            />
            {bar.input.height > 0 && (
              <rect className="input" x={bar.x} y={bar.input.y} width={bar.width} height={bar.input.height} />
            )}
            {bar.output.height > 0 && (
              <rect
                className="output"
                x={bar.x}
                y={bar.output.y}
                width={bar.width}
                height={bar.output.height}
              />
            )}
          </g>
        ))}
        <line
          className="usage-baseline"
          x1={layout.left}
          x2={layout.width - layout.right}
          y1={chart.baseline}
          y2={chart.baseline}
        />
      </svg>
    </figure>
  );

  function tokensText(count: number) {
    return t("usagePage.tokenCount", { count, tokens: formatNumber(count) });
  }
}
