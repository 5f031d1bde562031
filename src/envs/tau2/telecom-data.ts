import { pick } from "./data.ts";
import { DEFAULT_APN } from "./telecom-device.ts";

/** tau2's telecom models as pydantic dumps them: field order, defaults, and dates as `str()` prints them. */
type Row = Record<string, unknown>;

const asDate = (value: unknown) => (typeof value === "string" ? value.slice(0, 10) : (value ?? null));
const asDateTime = (value: unknown) => (typeof value === "string" ? (value.length === 10 ? `${value} 00:00:00` : value.replace("T", " ")) : (value ?? null));

function withDefaults(raw: unknown, fields: string[], defaults: Row): Row {
  const row = pick(raw, fields);
  for (const [key, value] of Object.entries(defaults)) if ((raw as Row)?.[key] === undefined) row[key] = typeof value === "function" ? value() : value;
  return row;
}

function normalizeLine(raw: unknown): Row {
  const line = withDefaults(
    raw,
    [
      "line_id",
      "phone_number",
      "status",
      "plan_id",
      "device_id",
      "data_used_gb",
      "data_refueling_gb",
      "roaming_enabled",
      "contract_end_date",
      "last_plan_change_date",
      "last_sim_replacement_date",
      "suspension_start_date",
    ],
    { status: "Pending Activation", data_used_gb: 0.0, data_refueling_gb: 0.0, roaming_enabled: false },
  );
  for (const key of ["contract_end_date", "last_plan_change_date", "last_sim_replacement_date", "suspension_start_date"]) line[key] = asDate(line[key]);
  return line;
}

function normalizeBill(raw: unknown): Row {
  const bill = withDefaults(raw, ["bill_id", "customer_id", "period_start", "period_end", "issue_date", "total_due", "due_date", "line_items", "status"], {
    line_items: () => [],
    status: "Draft",
  });
  for (const key of ["period_start", "period_end", "issue_date", "due_date"]) bill[key] = asDate(bill[key]);
  bill.line_items = (bill.line_items as unknown[]).map((item) => {
    const row = pick(item, ["description", "amount", "date", "item_type"]);
    row.date = asDate(row.date);
    return row;
  });
  return bill;
}

export function normalizeTelecomAgent(raw: Row): Row {
  const list = (key: string) => ((raw[key] as unknown[] | undefined) ?? []) as unknown[];
  return {
    plans: list("plans").map((plan) => pick(plan, ["plan_id", "name", "data_limit_gb", "price_per_month", "data_refueling_price_per_gb"])),
    customers: list("customers").map((customer) => {
      const row = withDefaults(
        customer,
        [
          "customer_id",
          "full_name",
          "date_of_birth",
          "email",
          "phone_number",
          "address",
          "account_status",
          "payment_methods",
          "line_ids",
          "bill_ids",
          "created_at",
          "last_extension_date",
          "goodwill_credit_used_this_year",
        ],
        {
          account_status: "Pending Verification",
          payment_methods: () => [],
          line_ids: () => [],
          bill_ids: () => [],
          created_at: "2025-01-01",
          goodwill_credit_used_this_year: 0.0,
        },
      );
      row.address = pick(row.address, ["street", "city", "state", "zip_code"]);
      row.payment_methods = (row.payment_methods as unknown[]).map((method) => pick(method, ["method_type", "account_number_last_4", "expiration_date"]));
      row.created_at = asDateTime(row.created_at);
      row.last_extension_date = asDate(row.last_extension_date);
      return row;
    }),
    lines: list("lines").map(normalizeLine),
    bills: list("bills").map(normalizeBill),
    devices: list("devices").map((device) => {
      const row = withDefaults(
        device,
        ["device_id", "device_type", "model", "imei", "is_esim_capable", "activated", "activation_date", "last_esim_transfer_date"],
        { activated: false },
      );
      row.activation_date = asDateTime(row.activation_date);
      row.last_esim_transfer_date = asDateTime(row.last_esim_transfer_date);
      return row;
    }),
  };
}

const DEVICE_FIELDS = [
  "sim_card_status",
  "sim_card_missing",
  "airplane_mode",
  "network_signal_strength",
  "network_technology_connected",
  "network_connection_status",
  "battery_level",
  "data_enabled",
  "roaming_enabled",
  "network_mode_preference",
  "active_apn_settings",
  "wifi_enabled",
  "wifi_connected",
  "wifi_ssid",
  "wifi_signal_strength",
  "wifi_calling_enabled",
  "wifi_calling_mms_over_wifi",
  "data_saver_mode",
  "vpn_enabled_setting",
  "vpn_connected",
  "vpn_details",
  "app_statuses",
];
const DEVICE_DEFAULTS: Row = {
  sim_card_status: "active",
  sim_card_missing: false,
  airplane_mode: false,
  network_signal_strength: "good",
  network_technology_connected: "5G",
  network_connection_status: "connected",
  battery_level: 80,
  data_enabled: true,
  roaming_enabled: false,
  network_mode_preference: "4g_5g_preferred",
  wifi_enabled: false,
  wifi_connected: false,
  wifi_signal_strength: "none",
  wifi_calling_enabled: false,
  wifi_calling_mms_over_wifi: false,
  data_saver_mode: false,
  vpn_enabled_setting: false,
  vpn_connected: false,
};
const PERMISSIONS = ["sms", "storage", "phone", "network"];

export function normalizeTelecomUser(raw: Row): Row {
  const device = withDefaults(raw.device, DEVICE_FIELDS, DEVICE_DEFAULTS);
  device.active_apn_settings = { ...DEFAULT_APN(), ...pick(device.active_apn_settings ?? DEFAULT_APN(), Object.keys(DEFAULT_APN())) };
  for (const [key, value] of Object.entries(DEFAULT_APN()))
    if ((raw.device as Row | undefined)?.active_apn_settings && ((raw.device as Row).active_apn_settings as Row)[key] === undefined)
      (device.active_apn_settings as Row)[key] = value;
  if (device.vpn_details)
    device.vpn_details = withDefaults(device.vpn_details, ["server_address", "protocol", "server_performance"], { server_performance: "unknown" });
  const apps = (device.app_statuses as Row | null) ?? {
    messaging: { app_name: "messaging", permissions: { sms: true, storage: true, phone: true } },
    browser: { app_name: "browser", permissions: { network: true, storage: true } },
  };
  device.app_statuses = Object.fromEntries(
    Object.entries(apps).map(([name, app]) => [
      name,
      {
        app_name: (app as Row).app_name,
        permissions: Object.fromEntries(PERMISSIONS.map((key) => [key, ((app as Row).permissions as Row | undefined)?.[key] ?? false])),
      },
    ]),
  );
  const surroundings = withDefaults(
    raw.surroundings,
    ["name", "phone_number", "is_abroad", "roaming_allowed", "signal_strength", "mobile_data_usage_exceeded", "line_active", "payment_request"],
    {
      is_abroad: false,
      roaming_allowed: false,
      signal_strength: () => ({ "2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent" }),
      mobile_data_usage_exceeded: false,
      line_active: true,
    },
  );
  if (surroundings.payment_request)
    surroundings.payment_request = withDefaults(surroundings.payment_request, ["bill_id", "amount_due", "paid"], { paid: false });
  return { device, surroundings };
}
