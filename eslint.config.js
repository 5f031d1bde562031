import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "runs/**", ".venv/**", "python/**", "assets/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "max-lines": ["warn", { max: 450, skipBlankLines: true, skipComments: true }],
    },
  },
);
