import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "runs/**", ".venv/**", "python/**", "assets/**", ".cache/**", "src/web/viewer-client.js"] },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // A promise nobody awaits loses its errors (an unfinished write, an unflushed file).
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
      "max-lines": ["error", { max: 450, skipBlankLines: true, skipComments: true }],
    },
  },
  { files: ["**/*.mjs", "**/*.js"], ...tseslint.configs.disableTypeChecked },
  {
    // Tests are read top to bottom as specifications; long ones stay whole. node:test's describe/it
    // return promises the runner itself tracks.
    files: ["**/*.test.ts", "src/testing/environment-contract.ts"],
    rules: { "max-lines": "off", "@typescript-eslint/no-floating-promises": "off" },
  },
);
