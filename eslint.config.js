import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";

/** Focused or skipped tests pass silently outside CI: refused everywhere. */
const noFocusedOrSkippedTests = {
  selector:
    "MemberExpression[object.name=/^(it|test|describe|suite)$/][property.name=/^(only|skip|skipIf|runIf|todo)$/]",
  message: "No focused, skipped or conditional tests: a test runs everywhere or is deleted.",
};

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/generated/**", "**/dist/**", ".data/**", ".cache/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
  {
    files: ["**/*.test.ts", "test/**", "bench/**", "scripts/**", "packages/test-support/**", "**/src/testing/**"],
    rules: { "no-console": "off", "no-restricted-syntax": ["error", noFocusedOrSkippedTests] },
  },
  // Formatting is Prettier's (checked by `npm run lint`); rules that would fight it are off.
  prettier,
);
