// Lints the UI's sources: TypeScript's recommended rules and React's hook rules (including
// the rules that keep refs out of render and effects' dependency lists complete).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "node_modules", "src/api/schema.d.ts", "e2e/.artifacts"] },
  {
    files: ["src/**/*.{ts,tsx}"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended, reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
    rules: {
      "react-hooks/exhaustive-deps": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["e2e/**/*.mjs", "tools/**/*.mjs"],
    extends: [js.configs.recommended],
    // Browser globals too: code passed to `page.evaluate` runs in the page.
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
