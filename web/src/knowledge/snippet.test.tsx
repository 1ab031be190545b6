import { render } from "@testing-library/react";
import { describe, expect, test } from "vitest";
import { Snippet } from "./KbSearchPanel";
import { decodeEntities, snippetSegments } from "./snippet";

describe("a search hit's snippet", () => {
  test("marks the words in <b>…</b> and keeps the rest as text", () => {
    expect(snippetSegments("Hotels up to <b>120</b> EUR per <b>night</b>.")).toEqual([
      { text: "Hotels up to ", hit: false },
      { text: "120", hit: true },
      { text: " EUR per ", hit: false },
      { text: "night", hit: true },
      { text: ".", hit: false },
    ]);
  });

  test("Chinese matches are marked the same way", () => {
    expect(snippetSegments("出差<b>住宿</b>标准为每晚<b>500</b>元")).toEqual([
      { text: "出差", hit: false },
      { text: "住宿", hit: true },
      { text: "标准为每晚", hit: false },
      { text: "500", hit: true },
      { text: "元", hit: false },
    ]);
  });

  test("escaped markup in the text is decoded to text, never to elements", () => {
    const segments = snippetSegments(
      "a &lt;script&gt;alert(1)&lt;/script&gt; &amp; <b>&quot;x&quot;</b> &#39;y&#x27;",
    );
    expect(segments).toEqual([
      { text: "a <script>alert(1)</script> & ", hit: false },
      { text: '"x"', hit: true },
      { text: " 'y'", hit: false },
    ]);
    const { container } = render(<Snippet snippet="&lt;img src=x onerror=alert(1)&gt; <b>hit</b>" />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("mark")!.textContent).toBe("hit");
    expect(container.textContent).toBe("<img src=x onerror=alert(1)> hit");
  });

  test("adjacent marks join, an unclosed one marks the rest, empty parts vanish", () => {
    expect(snippetSegments("<b>new</b><b>York</b> trip")).toEqual([
      { text: "newYork", hit: true },
      { text: " trip", hit: false },
    ]);
    expect(snippetSegments("see <B>all")).toEqual([
      { text: "see ", hit: false },
      { text: "all", hit: true },
    ]);
    expect(snippetSegments("")).toEqual([]);
  });

  test("unknown or invalid references are left as written", () => {
    expect(decodeEntities("&copy; &#0; &#x110000; &bogus; & alone")).toBe(
      "&copy; &#0; &#x110000; &bogus; & alone",
    );
    expect(decodeEntities("&#20013;&#x6587;")).toBe("中文");
  });
});
