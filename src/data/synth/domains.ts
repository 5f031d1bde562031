/**
 * Domain material for the synthetic Tau2 generator: a long policy per domain (the same text for every
 * dialog of a domain, as in tau2, where the system prompt is the domain policy plus tool schemas), the
 * tools, and builders for realistic tool arguments and (large) tool results.
 */
import type { Random } from "../../core/random.ts";
import { createRandom } from "../../core/random.ts";
import { PythonFloat, pythonJsonDumps } from "../../python-semantics/index.ts";

export type SynthDomain = "airline" | "retail" | "telecom";

export interface SynthTool {
  name: string;
  description: string;
  parameters: Record<string, string>;
}

const tools: Record<SynthDomain, SynthTool[]> = {
  airline: [
    { name: "get_user_details", description: "Get the details of a user, including their reservations.", parameters: { user_id: "string" } },
    { name: "get_reservation_details", description: "Get the details of a reservation.", parameters: { reservation_id: "string" } },
    {
      name: "search_direct_flight",
      description: "Search for direct flights between two cities on a specific date.",
      parameters: { origin: "string", destination: "string", date: "string" },
    },
    {
      name: "update_reservation_flights",
      description: "Update the flight information of a reservation.",
      parameters: { reservation_id: "string", cabin: "string", flights: "array", payment_id: "string" },
    },
    { name: "cancel_reservation", description: "Cancel the whole reservation.", parameters: { reservation_id: "string" } },
    { name: "send_certificate", description: "Send a certificate to a user. Be careful!", parameters: { user_id: "string", amount: "number" } },
  ],
  retail: [
    {
      name: "find_user_id_by_name_zip",
      description: "Find user id by first name, last name, and zip code.",
      parameters: { first_name: "string", last_name: "string", zip: "string" },
    },
    { name: "get_order_details", description: "Get the status and details of an order.", parameters: { order_id: "string" } },
    { name: "get_product_details", description: "Get the inventory details of a product.", parameters: { product_id: "string" } },
    {
      name: "exchange_delivered_order_items",
      description: "Exchange items in a delivered order to new items of the same product type.",
      parameters: { order_id: "string", item_ids: "array", new_item_ids: "array", payment_method_id: "string" },
    },
    {
      name: "return_delivered_order_items",
      description: "Return some items of a delivered order.",
      parameters: { order_id: "string", item_ids: "array", payment_method_id: "string" },
    },
  ],
  telecom: [
    { name: "get_customer_by_phone", description: "Finds a customer by their primary contact or line phone number.", parameters: { phone_number: "string" } },
    { name: "get_details_by_id", description: "Retrieves the details for a given ID (customer, line, device, bill, plan).", parameters: { id: "string" } },
    { name: "suspend_line", description: "Suspends a specific line.", parameters: { customer_id: "string", line_id: "string", reason: "string" } },
    {
      name: "refuel_data",
      description: "Refuels data for a specific line, adding to the customer's bill.",
      parameters: { customer_id: "string", line_id: "string", gb_amount: "number" },
    },
    {
      name: "transfer_to_human_agents",
      description: "Transfer the user to a human agent, with a summary of the user's issue.",
      parameters: { summary: "string" },
    },
  ],
};

/** Telecom user-side (phone) tools: tau2 routes these to the user simulator, not the agent. */
export const telecomUserTools = ["check_status_bar", "toggle_airplane_mode", "check_network_status", "reset_apn_settings", "run_speed_test"];

const vocabulary: Record<SynthDomain, string[]> = {
  airline: [
    "reservation",
    "basic economy",
    "cabin",
    "checked bag",
    "travel insurance",
    "certificate",
    "gift card",
    "segment",
    "layover",
    "membership tier",
    "compensation",
    "cancellation window",
  ],
  retail: [
    "order",
    "exchange",
    "return",
    "payment method",
    "gift card balance",
    "item option",
    "pending order",
    "delivered order",
    "refund",
    "tracking number",
    "zip code",
    "product variant",
  ],
  telecom: [
    "line",
    "data plan",
    "roaming",
    "APN settings",
    "airplane mode",
    "SIM card",
    "bill",
    "overdue balance",
    "data refuel",
    "device",
    "signal strength",
    "mobile data",
  ],
};

const policyTemplates = [
  "The agent must verify the user's identity before any action that changes a {0}, using the user id or the {1}.",
  "Before taking a consequential action on a {0}, list the action details and obtain explicit user confirmation (yes) to proceed.",
  "The agent should not provide any information, knowledge, or procedures not provided by the user or available tools about the {0}.",
  "Only one tool call at a time; if a tool call is made, do not respond to the user in the same turn.",
  "A {0} can only be modified if it has not been flown, shipped or activated; a {1} cannot be changed after that point.",
  "Transfer the user to a human agent if and only if the request cannot be handled within the scope of the {0} policy.",
  "If the user asks for compensation about a {0}, check the {1} and offer it only when the conditions in this section hold.",
  "Each {0} has at most one {1}; the agent must ask which one the user means when several exist.",
  "Never make up a {0} or a {1}; look them up with the tools and quote the values they return.",
  "When the user changes a {0}, the price difference is charged to or refunded to the original {1}.",
];

function paragraph(random: Random, words: string[]): string {
  const sentences = Array.from({ length: random.integer(3, 6) }, () =>
    random.pick(policyTemplates).replace("{0}", random.pick(words)).replace("{1}", random.pick(words)),
  );
  return sentences.join(" ");
}

function toolSchemaText(domain: SynthDomain): string {
  return tools[domain]
    .map((tool) =>
      pythonJsonDumps({
        type: "function",
        function: {
          name: tool.name,
          description: tool.description,
          parameters: {
            type: "object",
            properties: Object.fromEntries(
              Object.entries(tool.parameters).map(([name, type]) => [name, { type, description: `The ${name.replaceAll("_", " ")}.` }]),
            ),
            required: Object.keys(tool.parameters),
          },
        },
      }),
    )
    .join("\n");
}

const systemPrompts = new Map<SynthDomain, string>();

/** The domain's system prompt: agent instruction + a long policy (~9-16k characters) + tool schemas. */
export function systemPrompt(domain: SynthDomain): string {
  const cached = systemPrompts.get(domain);
  if (cached) return cached;
  const random = createRandom("synth-policy", domain);
  const sections = Array.from(
    { length: domain === "telecom" ? 18 : 11 },
    (_, index) =>
      `## ${domain} policy section ${index + 1}\n\n${Array.from({ length: random.integer(1, 2) }, () => paragraph(random, vocabulary[domain])).join("\n\n")}`,
  );
  const instruction =
    "You are a customer service agent that helps the user according to the <policy> provided below.\nIn each turn you can either:\n- Send a message to the user.\n- Make a tool call.\nYou cannot do both at the same time.\n\nTry to be helpful and always follow the policy. Always make sure you generate valid JSON only.";
  const prompt = `<instructions>\n${instruction}\n</instructions>\n<policy>\n# ${domain[0].toUpperCase()}${domain.slice(1)} Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n${sections.join("\n\n")}\n</policy>\n<tools>\n${toolSchemaText(domain)}\n</tools>`;
  systemPrompts.set(domain, prompt);
  return prompt;
}

export function domainTools(domain: SynthDomain): SynthTool[] {
  return tools[domain];
}

const firstNames = ["Mia", "Noah", "Sofía", "Yusuf", "Chen", "Aarav", "Olivia", "Lucas", "Zoë", "Émile", "Hana", "Mateo"];
const lastNames = ["Garcia", "Kim", "Nguyen", "Rossi", "Müller", "Okafor", "Silva", "Tanaka", "Smith", "Ivanova", "Haddad", "王"];
const cities = ["SFO", "JFK", "LAX", "ORD", "SEA", "BOS", "ATL", "DEN", "MIA", "PHX"];

function identifier(random: Random, prefix: string, length = 6): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";
  return prefix + Array.from({ length }, () => random.pick([...alphabet])).join("");
}

/** Arguments for a call; floats with integral values (`100.0`), tiny floats and integer-like keys appear sometimes. */
export function toolArguments(random: Random, tool: SynthTool): Record<string, unknown> | Map<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(tool.parameters)) {
    if (type === "number") args[name] = random.pick([new PythonFloat(100), 50, 2.5, new PythonFloat(1e-7 * 1e7), 0.00001, 1e16, 12.75]);
    else if (type === "array")
      args[name] = Array.from({ length: random.integer(1, 3) }, () =>
        name === "flights" ? { flight_number: identifier(random, "HAT", 3), date: `2024-05-${random.integer(10, 28)}` } : identifier(random, "", 10),
      );
    else if (name.includes("name")) args[name] = random.pick(name.startsWith("first") ? firstNames : lastNames);
    else if (name === "zip") args[name] = String(random.integer(10000, 99999));
    else if (name === "date") args[name] = `2024-05-${random.integer(16, 30)}`;
    else if (name === "origin" || name === "destination") args[name] = random.pick(cities);
    else if (name === "summary" || name === "reason")
      args[name] = `User reports: ${random.pick(vocabulary.telecom)} issue — "${random.pick(["no service", "slow data", "can't call"])}"`;
    else args[name] = identifier(random, name.split("_")[0].slice(0, 3) + "_");
  }
  if (random.chance(0.05)) return new Map<string, unknown>([["10", "ten"], ["2", "two"], ...Object.entries(args)]);
  return args;
}

/** A JSON tool result; `large` makes it tens of kilobytes (search results, full account dumps). */
export function toolResult(random: Random, domain: SynthDomain, tool: SynthTool, large: boolean): string {
  if (tool.name.startsWith("transfer")) return "Transfer successful";
  if (random.chance(0.04)) return `Error: ${random.pick(vocabulary[domain])} not found`;
  const count = large ? random.integer(150, 400) : random.integer(2, 9);
  const items = Array.from({ length: count }, (_, index) => ({
    id: identifier(random, `${domain.slice(0, 2)}_`, 8),
    index,
    name: `${random.pick(firstNames)} ${random.pick(lastNames)}`,
    status: random.pick(["active", "pending", "delivered", "cancelled", "suspended"]),
    price: new PythonFloat(random.integer(20, 900)),
    rate: random.integer(1, 999) / 100,
    note: random.chance(0.2) ? paragraph(random, vocabulary[domain]) : "",
    tags: [random.pick(vocabulary[domain]), random.pick(vocabulary[domain])],
  }));
  const payload = { [`${tool.name.replace(/^(get|find|search)_/, "")}`]: items, total: count, currency: "USD" };
  return random.chance(0.5) ? pythonJsonDumps(payload, { indent: 2 }) : pythonJsonDumps(payload);
}
