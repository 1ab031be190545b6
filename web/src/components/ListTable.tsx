/**
 * A page's list of resources as a table — agents, skills, MCP servers, knowledge bases and their
 * documents, model providers, users, API tokens — so every list has the same look (a bordered
 * surface, padded rows) and scrolls sideways on a narrow screen instead of widening the page.
 */

import type { ReactNode } from "react";

interface ListTableProps {
  /** A class of the page's own beside `list-table` (for its column rules). */
  className?: string;
  testId?: string;
  /** The `<thead>` and `<tbody>`. */
  children: ReactNode;
}

export function ListTable({ className, testId, children }: ListTableProps) {
  return (
    <div className="table-wrap">
      <table className={className ? `list-table ${className}` : "list-table"} data-testid={testId}>
        {children}
      </table>
    </div>
  );
}
