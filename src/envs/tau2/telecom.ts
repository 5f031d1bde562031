import { lazy, readAsset } from "./data.ts";
import type { Tau2Domain } from "./environment.ts";
import { PythonError, PythonFloat, pythonFloatRepr, pythonFormatFixed, pythonLower, pythonStr } from "../../python-semantics/index.ts";
import { deepFreeze, type CowStore } from "./store.ts";
import { normalizeTelecomAgent, normalizeTelecomUser } from "./telecom-data.ts";
import { Phone, telecomUserTools } from "./telecom-device.ts";
import { telecomUserFunctions } from "./telecom-setup.ts";
import { parseToml } from "./toml.ts";
import { model, numericArgument, pythonArgumentText, type Tau2Function, type ToolContext, type ToolType } from "./toolkit.ts";

/**
 * tau2's telecom domain, agent side (`TelecomTools` over `TelecomDB`) and the environment's sync. The
 * clock is tau2's fixed one (today = 2025-02-25). Dates are kept as the text `str()` gives them.
 */
type Row = Record<string, unknown>;
const TODAY = "2025-02-25";

const agentDb = lazy(() => deepFreeze(normalizeTelecomAgent(parseToml(readAsset("domains/telecom/db.toml"), "assets/tau2/domains/telecom/db.toml"))));
const userDb = lazy(() => deepFreeze(normalizeTelecomUser(parseToml(readAsset("domains/telecom/user_db.toml"), "assets/tau2/domains/telecom/user_db.toml"))));

const rows = (context: ToolContext, table: string) => context.agent.root[table] as Row[];

function findIndex(context: ToolContext, table: string, key: string, id: unknown, label: string): number {
  const index = rows(context, table).findIndex((row) => row[key] === id);
  if (index < 0) throw new PythonError("ValueError", `${label} ${pythonStr(id)} not found`);
  return index;
}

const getCustomer = (context: ToolContext, id: unknown) =>
  rows(context, "customers")[findIndex(context, "customers", "customer_id", id, "Customer with ID")] as Row;
const getLine = (context: ToolContext, id: unknown) => rows(context, "lines")[findIndex(context, "lines", "line_id", id, "Line with ID")] as Row;
const getPlan = (context: ToolContext, id: unknown) => rows(context, "plans")[findIndex(context, "plans", "plan_id", id, "Plan with ID")] as Row;
const getBill = (context: ToolContext, id: unknown) => rows(context, "bills")[findIndex(context, "bills", "bill_id", id, "Bill with ID")] as Row;
const getDevice = (context: ToolContext, id: unknown) => rows(context, "devices")[findIndex(context, "devices", "device_id", id, "Device with ID")] as Row;
const writableRow = (store: CowStore, table: string, index: number): Row => store.writable([table, String(index)]);

function targetLineIndex(context: ToolContext, customerId: unknown, lineId: unknown): number {
  const customer = getCustomer(context, customerId);
  if (!(customer.line_ids as unknown[]).includes(lineId))
    throw new PythonError("ValueError", `Line ${pythonStr(lineId)} not found for customer ${pythonStr(customerId)}`);
  return findIndex(context, "lines", "line_id", lineId, "Line with ID");
}

function customerByPhone(context: ToolContext, phone: unknown): Row {
  for (const customer of rows(context, "customers")) {
    if (customer.phone_number === phone) return customer;
    for (const lineId of customer.line_ids as string[]) if (getLine(context, lineId).phone_number === phone) return customer;
  }
  throw new PythonError("ValueError", `Customer with phone number ${pythonStr(phone)} not found`);
}

const awaitingPayment = (context: ToolContext, customer: Row) =>
  (customer.bill_ids as string[]).map((id) => getBill(context, id)).filter((bill) => bill.status === "Awaiting Payment");

function tool(name: string, type: ToolType, params: string[], run: Tau2Function["run"], defaults?: Row): Tau2Function {
  return { name, type, params, run, ...(defaults ? { defaults } : {}) };
}

function setRoaming(context: ToolContext, args: Row, enabled: boolean): string {
  const index = targetLineIndex(context, args.customer_id, args.line_id);
  if (Boolean((rows(context, "lines")[index] as Row).roaming_enabled) === enabled) return `Roaming was already ${enabled ? "enabled" : "disabled"}`;
  writableRow(context.agent, "lines", index).roaming_enabled = enabled;
  return `Roaming ${enabled ? "enabled" : "disabled"} successfully`;
}

const agentTools: Tau2Function[] = [
  tool("get_customer_by_phone", "read", ["phone_number"], (context, { phone_number }) => model(customerByPhone(context, phone_number))),
  tool("get_customer_by_id", "read", ["customer_id"], (context, { customer_id }) => model(getCustomer(context, customer_id))),
  tool("get_customer_by_name", "read", ["full_name", "dob"], (context, { full_name, dob }) =>
    rows(context, "customers")
      .filter((customer) => pythonLower(customer.full_name) === pythonLower(full_name) && customer.date_of_birth === dob)
      .map(model),
  ),
  tool("get_details_by_id", "read", ["id"], (context, { id }) => {
    const text = typeof id === "string" ? id : "";
    if (typeof id !== "string")
      throw new PythonError("AttributeError", `'${typeof id === "number" ? "int" : "NoneType"}' object has no attribute 'startswith'`);
    if (text.startsWith("L")) return model(getLine(context, id));
    if (text.startsWith("D")) return model(getDevice(context, id));
    if (text.startsWith("B")) return model(getBill(context, id));
    if (text.startsWith("C")) return model(getCustomer(context, id));
    if (text.startsWith("P")) return model(getPlan(context, id));
    throw new PythonError("ValueError", `Unknown ID format or type: ${text}`);
  }),
  tool("suspend_line", "write", ["customer_id", "line_id", "reason"], (context, args) => {
    const index = targetLineIndex(context, args.customer_id, args.line_id);
    if ((rows(context, "lines")[index] as Row).status !== "Active") throw new PythonError("ValueError", "Line must be active to suspend");
    const line = writableRow(context.agent, "lines", index);
    Object.assign(line, { status: "Suspended", suspension_start_date: TODAY });
    return { message: "Line suspended successfully. $5/month holding fee will apply.", line: model(line) };
  }),
  tool("resume_line", "write", ["customer_id", "line_id"], (context, args) => {
    const index = targetLineIndex(context, args.customer_id, args.line_id);
    const status = (rows(context, "lines")[index] as Row).status;
    if (status !== "Suspended" && status !== "Pending Activation") throw new PythonError("ValueError", "Line must be suspended to resume");
    const line = writableRow(context.agent, "lines", index);
    Object.assign(line, { status: "Active", suspension_start_date: null });
    return { message: "Line resumed successfully", line: model(line) };
  }),
  tool(
    "get_bills_for_customer",
    "read",
    ["customer_id", "limit"],
    (context, { customer_id, limit }) => {
      const customer = getCustomer(context, customer_id);
      const bills = (customer.bill_ids as string[]).map((id) => getBill(context, id));
      // Python's sort is stable: equal issue dates keep their order, reversed as a block by reverse=True.
      const sorted = bills
        .map((bill, position) => ({ bill, position }))
        .sort((a, b) => (a.bill.issue_date === b.bill.issue_date ? a.position - b.position : String(a.bill.issue_date) < String(b.bill.issue_date) ? 1 : -1));
      return sorted.slice(0, sliceIndex(limit)).map((entry) => model(entry.bill));
    },
    { limit: 12 },
  ),
  tool("send_payment_request", "write", ["customer_id", "bill_id"], (context, { customer_id, bill_id }) => {
    const customer = getCustomer(context, customer_id);
    if (awaitingPayment(context, customer).length !== 0) throw new PythonError("ValueError", "A bill is already awaiting payment for this customer");
    if (!(customer.bill_ids as unknown[]).includes(bill_id))
      throw new PythonError("ValueError", `Bill ${pythonStr(bill_id)} not found for customer ${pythonStr(customer_id)}`);
    const index = findIndex(context, "bills", "bill_id", bill_id, "Bill with ID");
    writableRow(context.agent, "bills", index).status = "Awaiting Payment";
    return `Payment request sent to the customer for bill ${pythonStr(bill_id)}`;
  }),
  tool("get_data_usage", "read", ["customer_id", "line_id"], (context, { customer_id, line_id }) => {
    const line = rows(context, "lines")[targetLineIndex(context, customer_id, line_id)] as Row;
    const plan = getPlan(context, line.plan_id);
    return {
      line_id,
      data_used_gb: line.data_used_gb,
      data_limit_gb: plan.data_limit_gb,
      data_refueling_gb: line.data_refueling_gb,
      cycle_end_date: "2025-02-28",
    };
  }),
  tool("enable_roaming", "write", ["customer_id", "line_id"], (context, args) => setRoaming(context, args, true)),
  tool("disable_roaming", "write", ["customer_id", "line_id"], (context, args) => setRoaming(context, args, false)),
  tool("transfer_to_human_agents", "generic", ["summary"], () => "Transfer successful"),
  tool("refuel_data", "write", ["customer_id", "line_id", "gb_amount"], (context, { customer_id, line_id, gb_amount }) => {
    const index = targetLineIndex(context, customer_id, line_id);
    // tau2 passes the arguments as json.loads typed them: `2` prints as 2 in the texts, while every
    // sum with the plan's float fields is a float (the charge, the line's refuelled total).
    const amount = numericArgument(gb_amount, "<=").value;
    if (amount <= 0) throw new PythonError("ValueError", "Refuel amount must be positive");
    const plan = getPlan(context, (rows(context, "lines")[index] as Row).plan_id);
    const rate = plan.data_refueling_price_per_gb as number;
    const charge = amount * rate;
    const line = writableRow(context.agent, "lines", index);
    line.data_refueling_gb = (line.data_refueling_gb as number) + amount;
    applyCharge(context, customer_id, charge, `Data refueling: ${pythonArgumentText(gb_amount)} GB at $${pythonFloatRepr(rate)}/GB`);
    return {
      message: `Successfully added ${pythonArgumentText(gb_amount)} GB of data for line ${pythonStr(line_id)} for $${pythonFormatFixed(charge, 2)}`,
      new_data_refueling_gb: new PythonFloat(line.data_refueling_gb as number),
      charge: new PythonFloat(charge),
    };
  }),
];

/** A slice bound as Python takes it: an int (bool included) or None; anything else raises. */
function sliceIndex(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  throw new PythonError("TypeError", "slice indices must be integers or None or have an __index__ method");
}

/** `_apply_one_time_charge`: onto the customer's draft bill (tau2 makes one with a random id when there is none). */
function applyCharge(context: ToolContext, customerId: unknown, amount: number, description: string): void {
  const customer = getCustomer(context, customerId);
  const draftId = (customer.bill_ids as string[]).find((id) => getBill(context, id).status === "Draft");
  if (!draftId) throw new PythonError("ValueError", "no draft bill to add the charge to (tau2 would create one with a random id)");
  const bill = writableRow(context.agent, "bills", findIndex(context, "bills", "bill_id", draftId, "Bill with ID"));
  bill.line_items = [...(bill.line_items as Row[]), { description, amount, date: TODAY, item_type: amount < 0 ? "Credit" : "Charge" }];
  bill.total_due = (bill.total_due as number) + amount;
}

const agentFunctions: Tau2Function[] = [
  tool("set_data_usage", "write", ["customer_id", "line_id", "data_used_gb"], (context, { customer_id, line_id, data_used_gb }) => {
    writableRow(context.agent, "lines", targetLineIndex(context, customer_id, line_id)).data_used_gb = data_used_gb;
    return `Data usage set to ${pythonStr(data_used_gb)} GB for line ${pythonStr(line_id)}`;
  }),
  tool("suspend_line_for_overdue_bill", "write", ["customer_id", "line_id", "new_bill_id", "contract_ended"], (context, args) => {
    const lineIndex = findIndex(context, "lines", "line_id", args.line_id, "Line with ID");
    const line = rows(context, "lines")[lineIndex] as Row;
    if (line.status !== "Active") throw new PythonError("ValueError", "Line must be active to suspend for unpaid bill");
    const amount = getPlan(context, line.plan_id).price_per_month as number;
    if (amount <= 0) throw new PythonError("ValueError", "Amount must be positive for overdue bill");
    const customer = getCustomer(context, args.customer_id);
    if ((customer.bill_ids as string[]).some((id) => getBill(context, id).status === "Overdue"))
      throw new PythonError("ValueError", "Customer already has an overdue bill");
    // tau2's fixed clock: today 2025-02-25, so the overdue bill covers January 2025.
    const bill = context.agent.own({
      bill_id: args.new_bill_id,
      customer_id: args.customer_id,
      period_start: "2025-01-01",
      period_end: "2025-01-31",
      issue_date: "2025-01-01",
      total_due: 0 + amount,
      due_date: "2025-01-15",
      line_items: [{ description: `Charge for line ${pythonStr(line.line_id)}`, amount, date: TODAY, item_type: "Charge" }],
      status: "Overdue",
    });
    const bills = context.agent.writable<unknown[]>(["bills"]);
    bills.push(bill);
    const customerIndex = findIndex(context, "customers", "customer_id", args.customer_id, "Customer with ID");
    const writableCustomer = writableRow(context.agent, "customers", customerIndex);
    writableCustomer.bill_ids = [...(writableCustomer.bill_ids as string[]), args.new_bill_id];
    const target = writableRow(context.agent, "lines", lineIndex);
    Object.assign(target, { status: "Suspended", suspension_start_date: TODAY, ...(args.contract_ended ? { contract_end_date: "2025-01-31" } : {}) });
    return `Line ${pythonStr(args.line_id)} suspended for unpaid bill ${pythonStr(args.new_bill_id)}. Contract ended: ${args.contract_ended ? "True" : "False"}`;
  }),
  tool("assert_data_refueling_amount", "read", ["customer_id", "line_id", "expected_amount"], (context, { customer_id, line_id, expected_amount }) => {
    const line = rows(context, "lines")[targetLineIndex(context, customer_id, line_id)] as Row;
    return Math.abs((line.data_refueling_gb as number) - (expected_amount as number)) < 1e-6;
  }),
  tool("assert_line_status", "read", ["customer_id", "line_id", "expected_status"], (context, { customer_id, line_id, expected_status }) => {
    return (rows(context, "lines")[targetLineIndex(context, customer_id, line_id)] as Row).status === expected_status;
  }),
  tool("assert_no_overdue_bill", "read", ["overdue_bill_id"], (context, { overdue_bill_id }) => {
    const bill = rows(context, "bills").find((row) => row.bill_id === overdue_bill_id);
    return !bill || bill.status === "Paid";
  }),
];

function lineByPhone(context: ToolContext, phone: unknown): Row {
  const line = rows(context, "lines").find((row) => row.phone_number === phone);
  if (!line) throw new PythonError("ValueError", `Line with phone number ${pythonStr(phone)} not found`);
  return line;
}

/** tau2's `TelecomEnvironment.sync_tools`: line status, roaming and data quota reach the phone; a paid request pays the bill. */
function syncTelecom(context: ToolContext): void {
  if (!context.user) return;
  const phone = new Phone(context.user);
  const number = phone.surroundings.phone_number;
  if (number == null) return;
  const line = lineByPhone(context, number);
  const plan = getPlan(context, line.plan_id);
  const exceeded = (line.data_used_gb as number) >= (plan.data_limit_gb as number) + (line.data_refueling_gb as number);
  const wanted = { line_active: line.status === "Active", roaming_allowed: Boolean(line.roaming_enabled), mobile_data_usage_exceeded: exceeded };
  const current = phone.surroundings;
  if (Object.entries(wanted).some(([key, value]) => current[key] !== value)) phone.setSurroundings(wanted);
  const request = phone.surroundings.payment_request as Row | null;
  if (request && request.paid) {
    writableRow(context.agent, "bills", findIndex(context, "bills", "bill_id", request.bill_id, "Bill with ID")).status = "Paid";
    phone.setSurroundings({ payment_request: null });
  }
  if (phone.surroundings.payment_request == null) {
    const bills = awaitingPayment(context, customerByPhone(context, number));
    if (bills.length > 0) {
      const bill = bills[0] as Row;
      phone.setSurroundings({ payment_request: context.user.own({ bill_id: bill.bill_id, amount_due: bill.total_due, paid: false }) });
    }
  }
}

export const telecomDomain: Tau2Domain = {
  id: "telecom",
  tools: { className: "TelecomTools", tools: agentTools, functions: agentFunctions, side: "agent" },
  userTools: { className: "TelecomUserTools", tools: telecomUserTools, functions: telecomUserFunctions, side: "user" },
  floatKeys: new Set([
    "data_limit_gb",
    "price_per_month",
    "data_refueling_price_per_gb",
    "data_used_gb",
    "data_refueling_gb",
    "amount",
    "total_due",
    "goodwill_credit_used_this_year",
    "amount_due",
  ]),
  agentDb,
  userDb,
  normalizeAgent: normalizeTelecomAgent,
  normalizeUser: normalizeTelecomUser,
  sync: syncTelecom,
};
