import { lazy, mapValues, pick, readDbAsset } from "./data.ts";
import { dictEntries, dictGet, dictValues } from "../../python-semantics/index.ts";
import type { Tau2Domain } from "./environment.ts";
import { PythonError, pythonCount, pythonJsonDumps, pythonHasKey, pythonIterate, pythonLower, pythonRound } from "../../python-semantics/index.ts";
import { calculate } from "./calculate.ts";
import { validateModel } from "./pydantic.ts";
import { deepFreeze, type CowStore } from "./store.ts";
import { model, type Tau2Function, type ToolContext, type ToolType } from "./toolkit.ts";

/**
 * tau2's retail domain: products, users, orders. Each tool reproduces tau2's `RetailTools` behaviour
 * (checks, messages, Python rounding, its in-place mutations) on a copy-on-write DB.
 */
type Row = Record<string, unknown>;

const ADDRESS = ["address1", "address2", "city", "country", "state", "zip"];
const ORDER = [
  "order_id",
  "user_id",
  "address",
  "items",
  "status",
  "fulfillments",
  "payment_history",
  "cancel_reason",
  "exchange_items",
  "exchange_new_items",
  "exchange_payment_method_id",
  "exchange_price_difference",
  "return_items",
  "return_payment_method_id",
];
const PAYMENT_FIELDS: Record<string, string[]> = {
  credit_card: ["source", "id", "brand", "last_four"],
  gift_card: ["source", "id", "balance"],
  paypal: ["source", "id"],
};

function normalizeOrder(raw: unknown): Row {
  const order = pick(raw, ORDER);
  order.address = pick(order.address, ADDRESS);
  order.items = (order.items as unknown[]).map((item) => pick(item, ["name", "product_id", "item_id", "price", "options"]));
  order.fulfillments = (order.fulfillments as unknown[]).map((item) => pick(item, ["tracking_id", "item_ids"]));
  order.payment_history = (order.payment_history as unknown[]).map((item) => pick(item, ["transaction_type", "amount", "payment_method_id"]));
  return order;
}

function normalizeUser(raw: unknown): Row {
  const user = pick(raw, ["user_id", "name", "address", "email", "payment_methods", "orders"]);
  user.name = pick(user.name, ["first_name", "last_name"]);
  user.address = pick(user.address, ADDRESS);
  user.payment_methods = mapValues(user.payment_methods, (method) => pick(method, PAYMENT_FIELDS[(method as Row).source as string] ?? ["source", "id"]));
  return user;
}

export function normalizeRetail(raw: Row): Row {
  return {
    products: mapValues(dictGet(raw, "products"), (product) => {
      const normalized = pick(product, ["name", "product_id", "variants"]);
      normalized.variants = mapValues(normalized.variants, (variant) => pick(variant, ["item_id", "options", "available", "price"]));
      return normalized;
    }),
    // Maps, not objects: an episode's first write copies the whole table, and copying a Map of a
    // thousand entries is far cheaper than spreading a thousand-key object.
    users: new Map(dictEntries(mapValues(dictGet(raw, "users"), normalizeUser))),
    orders: new Map(dictEntries(mapValues(dictGet(raw, "orders"), normalizeOrder))),
  };
}

const retailDb = lazy(() => deepFreeze(normalizeRetail(readDbAsset("domains/retail/db.json"))));

const db = (context: ToolContext): Row => context.agent.root;

function getOrder(context: ToolContext, orderId: unknown): Row {
  const orders = db(context).orders;
  if (!pythonHasKey(orders, orderId)) throw new PythonError("ValueError", "Order not found");
  return dictGet(orders, orderId as string) as Row;
}

function getUser(context: ToolContext, userId: unknown): Row {
  const users = db(context).users;
  if (!pythonHasKey(users, userId)) throw new PythonError("ValueError", "User not found");
  return dictGet(users, userId as string) as Row;
}

function getProduct(context: ToolContext, productId: unknown): Row {
  const products = db(context).products;
  if (!pythonHasKey(products, productId)) throw new PythonError("ValueError", "Product not found");
  return dictGet(products, productId as string) as Row;
}

function getVariant(context: ToolContext, productId: unknown, variantId: unknown): Row {
  const variants = getProduct(context, productId).variants;
  if (!pythonHasKey(variants, variantId)) throw new PythonError("ValueError", "Variant not found");
  return dictGet(variants, variantId as string) as Row;
}

function getPaymentMethod(context: ToolContext, userId: unknown, paymentId: unknown): Row {
  const methods = getUser(context, userId).payment_methods as Row;
  if (!pythonHasKey(methods, paymentId)) throw new PythonError("ValueError", "Payment method not found");
  return methods[paymentId as string] as Row;
}

const writableOrder = (store: CowStore, orderId: string): Row => store.writable(["orders", orderId]);
const writablePayment = (store: CowStore, userId: string, paymentId: string): Row => store.writable(["users", userId, "payment_methods", paymentId]);
const isGiftCard = (method: Row): boolean => method.source === "gift_card";

/** Raises like tau2 when a list holds more copies of an id than the order does (strings iterate per character). */
function checkCounts(itemIds: unknown, order: Row, message: (itemId: unknown) => string): void {
  const all = (order.items as Row[]).map((item) => item.item_id);
  for (const itemId of pythonIterate(itemIds)) {
    if (pythonCount(itemIds, itemId) > pythonCount(all, itemId)) throw new PythonError("ValueError", message(itemId));
  }
}

function pairs(left: unknown, right: unknown): [unknown, unknown][] {
  const a = pythonIterate(left);
  const b = pythonIterate(right);
  return a.slice(0, Math.min(a.length, b.length)).map((item, index) => [item, b[index]]);
}

function pyLength(value: unknown): number {
  if (typeof value === "string") return Array.from(value).length;
  if (Array.isArray(value)) return value.length;
  if (value !== null && typeof value === "object") return Object.keys(value).length;
  throw new PythonError("TypeError", `object of type '${value === null ? "NoneType" : typeof value === "number" ? "int" : "bool"}' has no len()`);
}

function sortedIds(value: unknown): unknown[] {
  return [...pythonIterate(value)].sort((a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
}

function tool(name: string, type: ToolType, params: string[], run: Tau2Function["run"]): Tau2Function {
  return { name, type, params, run };
}

const ADDRESS_PARAMS = ["address1", "address2", "city", "state", "country", "zip"];
/** tau2 builds a `UserAddress` from the arguments: pydantic checks every field is a str (in the model's field order). */
function newAddress(args: Row): Row {
  validateModel(
    "UserAddress",
    ADDRESS.map((field) => [field, "str", args[field]] as const),
  );
  return pick(args, ADDRESS);
}

const retailTools: Tau2Function[] = [
  tool("calculate", "generic", ["expression"], (_context, { expression }) => calculate(expression)),
  tool("cancel_pending_order", "write", ["order_id", "reason"], (context, { order_id, reason }) => {
    const order = getOrder(context, order_id);
    if (order.status !== "pending") throw new PythonError("ValueError", "Non-pending order cannot be cancelled");
    // `reason not in {...}`: a set lookup, so a list or dict raises before the comparison.
    if (
      !pythonHasKey(
        new Map([
          ["no longer needed", true],
          ["ordered by mistake", true],
        ]),
        reason,
      )
    )
      throw new PythonError("ValueError", "Invalid reason");
    const refunds: Row[] = [];
    for (const payment of order.payment_history as Row[]) {
      const paymentId = payment.payment_method_id as string;
      refunds.push({ transaction_type: "refund", amount: payment.amount, payment_method_id: paymentId });
      const method = getPaymentMethod(context, order.user_id, paymentId);
      if (isGiftCard(method)) {
        const card = writablePayment(context.agent, order.user_id as string, paymentId);
        card.balance = pythonRound((card.balance as number) + (payment.amount as number), 2);
      }
    }
    const target = writableOrder(context.agent, order_id as string);
    target.status = "cancelled";
    target.cancel_reason = reason;
    target.payment_history = [...(target.payment_history as Row[]), ...refunds];
    return model(target);
  }),
  tool("exchange_delivered_order_items", "write", ["order_id", "item_ids", "new_item_ids", "payment_method_id"], (context, args) => {
    const order = getOrder(context, args.order_id);
    if (order.status !== "delivered") throw new PythonError("ValueError", "Non-delivered order cannot be exchanged");
    checkCounts(args.item_ids, order, (itemId) => `Number of ${itemId} not found.`);
    if (pyLength(args.item_ids) !== pyLength(args.new_item_ids)) throw new PythonError("ValueError", "The number of items to be exchanged should match.");
    let diff = 0;
    for (const [itemId, newItemId] of pairs(args.item_ids, args.new_item_ids)) {
      const item = (order.items as Row[]).find((candidate) => candidate.item_id === itemId);
      if (!item) throw new PythonError("ValueError", `Item ${itemId} not found`);
      const variant = getVariant(context, item.product_id, newItemId);
      if (!variant.available) throw new PythonError("ValueError", `New item ${newItemId} not found or available`);
      diff += (variant.price as number) - (item.price as number);
    }
    diff = pythonRound(diff, 2);
    const method = getPaymentMethod(context, order.user_id, args.payment_method_id);
    if (isGiftCard(method) && (method.balance as number) < diff) {
      throw new PythonError("ValueError", "Insufficient gift card balance to pay for the price difference");
    }
    const target = writableOrder(context.agent, args.order_id as string);
    target.status = "exchange requested";
    target.exchange_items = sortedIds(args.item_ids);
    target.exchange_new_items = sortedIds(args.new_item_ids);
    target.exchange_payment_method_id = args.payment_method_id;
    target.exchange_price_difference = diff;
    return model(target);
  }),
  tool("find_user_id_by_name_zip", "read", ["first_name", "last_name", "zip"], (context, { first_name, last_name, zip }) => {
    for (const [userId, user] of dictEntries(db(context).users) as [string, Row][]) {
      const name = user.name as Row;
      if (
        pythonLower(name.first_name) === pythonLower(first_name) &&
        pythonLower(name.last_name) === pythonLower(last_name) &&
        (user.address as Row).zip === zip
      ) {
        return userId;
      }
    }
    throw new PythonError("ValueError", "User not found");
  }),
  tool("find_user_id_by_email", "read", ["email"], (context, { email }) => {
    for (const [userId, user] of dictEntries(db(context).users) as [string, Row][]) {
      if (pythonLower(user.email) === pythonLower(email)) return userId;
    }
    throw new PythonError("ValueError", "User not found");
  }),
  tool("get_order_details", "read", ["order_id"], (context, { order_id }) => model(getOrder(context, order_id))),
  tool("get_product_details", "read", ["product_id"], (context, { product_id }) => model(getProduct(context, product_id))),
  tool("get_item_details", "read", ["item_id"], (context, { item_id }) => {
    for (const product of dictValues(db(context).products) as Row[]) {
      if (pythonHasKey(product.variants, item_id)) return model(dictGet(product.variants, item_id as string));
    }
    throw new PythonError("ValueError", "Item not found");
  }),
  tool("get_user_details", "read", ["user_id"], (context, { user_id }) => model(getUser(context, user_id))),
  tool("list_all_product_types", "read", [], (context) => {
    const names: Row = {};
    for (const product of dictValues(db(context).products) as Row[]) names[product.name as string] = product.product_id;
    return pythonJsonDumps(names, { ensureAscii: true, sortKeys: true });
  }),
  tool("modify_pending_order_address", "write", ["order_id", ...ADDRESS_PARAMS], (context, args) => {
    const order = getOrder(context, args.order_id);
    if (!String(order.status).includes("pending")) throw new PythonError("ValueError", "Non-pending order cannot be modified");
    const target = writableOrder(context.agent, args.order_id as string);
    target.address = newAddress(args);
    return model(target);
  }),
  tool("modify_pending_order_items", "write", ["order_id", "item_ids", "new_item_ids", "payment_method_id"], modifyItems),
  tool("modify_pending_order_payment", "write", ["order_id", "payment_method_id"], modifyPayment),
  tool("modify_user_address", "write", ["user_id", ...ADDRESS_PARAMS], (context, args) => {
    getUser(context, args.user_id);
    const user = context.agent.writable(["users", args.user_id as string]);
    user.address = newAddress(args);
    return model(user);
  }),
  tool("return_delivered_order_items", "write", ["order_id", "item_ids", "payment_method_id"], (context, args) => {
    const order = getOrder(context, args.order_id);
    if (order.status !== "delivered") throw new PythonError("ValueError", "Non-delivered order cannot be returned");
    const user = getUser(context, order.user_id);
    const method = getPaymentMethod(context, user.user_id, args.payment_method_id);
    const firstPayment = (order.payment_history as Row[])[0] as Row;
    if (!isGiftCard(method) && args.payment_method_id !== firstPayment.payment_method_id) {
      throw new PythonError("ValueError", "Payment method should be the original payment method");
    }
    checkCounts(args.item_ids, order, () => "Some item not found");
    const target = writableOrder(context.agent, args.order_id as string);
    target.status = "return requested";
    target.return_items = sortedIds(args.item_ids);
    target.return_payment_method_id = args.payment_method_id;
    return model(target);
  }),
  tool("transfer_to_human_agents", "generic", ["summary"], () => "Transfer successful"),
];

function modifyItems(context: ToolContext, args: Row): unknown {
  const order = getOrder(context, args.order_id);
  if (order.status !== "pending") throw new PythonError("ValueError", "Non-pending order cannot be modified");
  checkCounts(args.item_ids, order, (itemId) => `${itemId} not found`);
  if (pyLength(args.item_ids) !== pyLength(args.new_item_ids)) throw new PythonError("ValueError", "The number of items to be exchanged should match");
  let diff = 0;
  let variant: Row | null = null;
  for (const [itemId, newItemId] of pairs(args.item_ids, args.new_item_ids)) {
    if (itemId === newItemId) throw new PythonError("ValueError", "The new item id should be different from the old item id");
    const item = (order.items as Row[]).find((candidate) => candidate.item_id === itemId);
    if (!item) throw new PythonError("ValueError", `Item ${itemId} not found`);
    variant = getVariant(context, item.product_id, newItemId);
    if (!variant.available) throw new PythonError("ValueError", `New item ${newItemId} not found or available`);
    diff += (variant.price as number) - (item.price as number);
  }
  const method = getPaymentMethod(context, order.user_id, args.payment_method_id);
  if (isGiftCard(method) && (method.balance as number) < diff) throw new PythonError("ValueError", "Insufficient gift card balance to pay for the new item");
  const target = writableOrder(context.agent, args.order_id as string);
  // tau2 stores abs(diff) unrounded, so float noise reaches payment_history.
  target.payment_history = [
    ...(target.payment_history as Row[]),
    { transaction_type: diff > 0 ? "payment" : "refund", amount: Math.abs(diff), payment_method_id: args.payment_method_id },
  ];
  if (isGiftCard(method)) {
    const card = writablePayment(context.agent, order.user_id as string, args.payment_method_id as string);
    card.balance = pythonRound((card.balance as number) - diff, 2);
  }
  // tau2 gives every modified item the price and options of the last new variant looked up.
  const items = (target.items as Row[]).map((item) => ({ ...item }));
  for (const [itemId, newItemId] of pairs(args.item_ids, args.new_item_ids)) {
    const item = items.find((candidate) => candidate.item_id === itemId);
    if (!item) throw new PythonError("ValueError", `Item ${itemId} not found`);
    item.item_id = newItemId;
    item.price = variant?.price;
    item.options = variant?.options;
  }
  target.items = items;
  target.status = "pending (item modified)";
  return model(target);
}

function modifyPayment(context: ToolContext, args: Row): unknown {
  const order = getOrder(context, args.order_id);
  if (!String(order.status).includes("pending")) throw new PythonError("ValueError", "Non-pending order cannot be modified");
  const method = getPaymentMethod(context, order.user_id, args.payment_method_id);
  const history = order.payment_history as Row[];
  if (history.length !== 1 || (history[0] as Row).transaction_type !== "payment") {
    throw new PythonError("ValueError", "There should be exactly one payment for a pending order");
  }
  const first = history[0] as Row;
  if (first.payment_method_id === args.payment_method_id)
    throw new PythonError("ValueError", "The new payment method should be different from the current one");
  const amount = first.amount as number;
  if (isGiftCard(method) && (method.balance as number) < amount) throw new PythonError("ValueError", "Insufficient gift card balance to pay for the order");
  const target = writableOrder(context.agent, args.order_id as string);
  target.payment_history = [
    ...history,
    { transaction_type: "payment", amount, payment_method_id: args.payment_method_id },
    { transaction_type: "refund", amount, payment_method_id: first.payment_method_id },
  ];
  const userId = order.user_id as string;
  if (isGiftCard(method)) {
    const card = writablePayment(context.agent, userId, args.payment_method_id as string);
    card.balance = pythonRound((card.balance as number) - amount, 2);
  }
  const oldMethod = getPaymentMethod(context, userId, first.payment_method_id);
  if (isGiftCard(oldMethod)) {
    const card = writablePayment(context.agent, userId, first.payment_method_id as string);
    card.balance = pythonRound((card.balance as number) + amount, 2);
  }
  return model(target);
}

export const retailDomain: Tau2Domain = {
  id: "retail",
  tools: { className: "RetailTools", tools: retailTools, functions: [], side: "agent" },
  userTools: null,
  floatKeys: new Set(["price", "amount", "balance", "exchange_price_difference"]),
  agentDb: retailDb,
  userDb: () => null,
  normalizeAgent: normalizeRetail,
  normalizeUser: (raw) => raw,
};
