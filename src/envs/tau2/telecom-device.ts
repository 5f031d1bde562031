import { PythonError, pythonFloatRepr, pythonHasKey, pythonLower, pythonRound, pythonStr, pythonTypeName } from "../../python-semantics/index.ts";
import { buildModel, type FieldKind } from "./pydantic.ts";
import type { CowStore } from "./store.ts";
import type { Tau2Function, ToolContext, ToolType } from "./toolkit.ts";

/**
 * tau2's telecom user side: the simulated phone (`TelecomUserTools` over `TelecomUserDB`), its network
 * search, speed test and MMS rules, the task set-up functions and the assertions tasks check.
 */
type Row = Record<string, unknown>;

export const DEFAULT_APN = (): Row => ({
  apn_name: "internet",
  reset_at_reboot: false,
  mms_apn: "mms",
  mmsc_url: "http://mms.carrier.com/mms/wapenc",
  mms_proxy: null,
  mms_port: null,
});
/** `APNSettings`' fields in declaration order: (name, pydantic type, default). */
const APN_FIELDS: ReadonlyArray<readonly [string, FieldKind, unknown]> = [
  ["apn_name", { enum: ["internet", "broken"] }, "internet"],
  ["reset_at_reboot", "bool", false],
  ["mms_apn", "optional_str", "mms"],
  ["mmsc_url", "optional_str", "http://mms.carrier.com/mms/wapenc"],
  ["mms_proxy", "optional_str", null],
  ["mms_port", "optional_int", null],
];
const MODES = ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"];

class Phone {
  constructor(private readonly store: CowStore) {}
  get device(): Row {
    return this.store.root.device as Row;
  }
  get surroundings(): Row {
    return this.store.root.surroundings as Row;
  }
  get apn(): Row {
    return this.device.active_apn_settings as Row;
  }
  /** An APN attribute, or the AttributeError Python raises once `set_apn_settings` stored a non-dict there. */
  apnField(name: string): unknown {
    const settings = this.device.active_apn_settings;
    if (settings === null || typeof settings !== "object" || Array.isArray(settings))
      throw new PythonError("AttributeError", `'${pythonTypeName(settings)}' object has no attribute '${name}'`);
    return (settings as Row)[name];
  }
  setDevice(fields: Row): void {
    Object.assign(this.store.writable(["device"]), fields);
  }
  setApn(fields: Row): void {
    Object.assign(this.store.writable(["device", "active_apn_settings"]), fields);
  }
  setSurroundings(fields: Row): void {
    Object.assign(this.store.writable(["surroundings"]), fields);
  }
  own<T extends object>(value: T): T {
    return this.store.own(value);
  }
  writablePermissions(app: string): Row {
    return this.store.writable(["device", "app_statuses", app, "permissions"]);
  }

  simStatus(): string {
    return this.device.sim_card_missing ? "missing" : (this.device.sim_card_status as string);
  }

  networkSearch(): void {
    const signal = (technology: string) => ((this.surroundings.signal_strength as Row)[technology] as string | undefined) ?? "none";
    const none = { network_connection_status: "no_service", network_technology_connected: "none", network_signal_strength: "none" };
    if (this.simStatus() === "active") {
      const preference = this.device.network_mode_preference;
      let technology = "4G";
      if (preference === "4g_5g_preferred") technology = signal("5G") === "none" ? "4G" : "5G";
      else if (preference === "3g_only") technology = "3G";
      else if (preference === "2g_only") technology = "2G";
      this.setDevice({ network_connection_status: "connected", network_technology_connected: technology, network_signal_strength: signal(technology) });
    } else {
      this.setDevice(none);
    }
    if (this.device.airplane_mode || this.apnField("apn_name") === "broken" || !this.surroundings.line_active) this.setDevice(none);
  }

  mobileDataWorking(): boolean {
    const device = this.device;
    if (device.airplane_mode || device.network_signal_strength === "none") return false;
    if (device.network_connection_status === "no_service") return false;
    if (this.surroundings.is_abroad && (!device.roaming_enabled || !this.surroundings.roaming_allowed)) return false;
    if (!device.data_enabled) return false;
    return !this.surroundings.mobile_data_usage_exceeded;
  }

  speedTest(): [number | null, string] {
    if (!this.mobileDataWorking()) return [null, "No Connection"];
    const device = this.device;
    const vpn = device.vpn_details as Row | null;
    let factor = device.vpn_connected && vpn && vpn.server_performance === "poor" ? 0.1 : 1.0;
    if (device.data_saver_mode) factor *= 0.2;
    const ranges: Record<string, [number, number]> = { "2G": [0.1, 0.4], "3G": [1.0, 5.0], "4G": [10.0, 100.0], "5G": [50.0, 500.0], none: [0, 0] };
    const [low, high] = ranges[device.network_technology_connected as string] ?? [0, 0];
    const signals: Record<string, number> = { poor: 0.2, fair: 0.5, good: 0.8, excellent: 1.0, none: 0 };
    const speed = pythonRound(((low + high) / 2.0) * (signals[device.network_signal_strength as string] ?? 0) * factor, 2);
    const description = speed < 1 ? "Very Poor" : speed < 5 ? "Poor" : speed < 25 ? "Fair" : speed < 100 ? "Good" : "Excellent";
    return [speed, description];
  }

  canSendMms(): boolean {
    if (!this.mobileDataWorking()) return false;
    const device = this.device;
    if (device.network_technology_connected === "2G") return false;
    if (device.wifi_calling_enabled && device.wifi_calling_mms_over_wifi) return false;
    if (this.apnField("mmsc_url") == null) return false;
    const messaging = (device.app_statuses as Row).messaging as Row | undefined;
    if (!messaging) return false;
    const permissions = messaging.permissions as Row;
    return Boolean(permissions.storage && permissions.sms);
  }

  statusBar(): string {
    const device = this.device;
    const parts: string[] = [];
    if (device.airplane_mode) parts.push("✈️ Airplane Mode");
    else {
      const bars: Record<string, string> = { none: "📵 No Signal", poor: "📶¹ Poor", fair: "📶² Fair", good: "📶³ Good", excellent: "📶⁴ Excellent" };
      parts.push(bars[device.network_signal_strength as string] ?? "📵 No Signal");
      if (device.network_technology_connected !== "none") parts.push(device.network_technology_connected as string);
      if (device.data_enabled && device.network_technology_connected !== "none") {
        parts.push("📱 Data Enabled");
        if (device.data_saver_mode) parts.push("🔽 Data Saver");
      } else parts.push("📵 Data Disabled");
    }
    if (device.wifi_enabled && device.wifi_connected) parts.push(device.wifi_ssid ? `📡 Connected to ${device.wifi_ssid}` : "📡 Enabled");
    if (device.vpn_connected) parts.push("🔒 VPN Connected");
    parts.push(`🔋 ${device.battery_level}%`);
    return parts.join(" | ");
  }

  withBar(text: string): string {
    return `${text}\nStatus Bar: ${this.statusBar()}`;
  }

  toggleAirplane(): boolean {
    const wasOn = Boolean(this.device.airplane_mode);
    this.setDevice({ airplane_mode: !wasOn });
    const offWifi = { wifi_connected: false, wifi_ssid: null, wifi_signal_strength: "none" };
    if (wasOn) {
      this.setDevice({ network_connection_status: "searching" });
      if (this.device.wifi_enabled) this.setDevice(offWifi);
    } else {
      this.setDevice(offWifi);
      if (this.device.vpn_connected) this.setDevice({ vpn_connected: false, vpn_details: null });
    }
    this.networkSearch();
    return Boolean(this.device.airplane_mode);
  }

  toggle(field: "data_enabled" | "roaming_enabled" | "data_saver_mode" | "wifi_calling_enabled", search: boolean): boolean {
    const next = !this.device[field];
    this.setDevice({ [field]: next });
    if (search) this.networkSearch();
    return next;
  }
}

const phone = (context: ToolContext): Phone => {
  if (!context.user) throw new PythonError("ValueError", "User tools not available");
  return new Phone(context.user);
};
const onOff = (value: boolean) => (value ? "ON" : "OFF");

/** `app_statuses.get(app_name)`: an unhashable name raises, a name of another type is simply absent. */
function appStatus(device: Phone, appName: unknown): Row | undefined {
  const apps = device.device.app_statuses as Row;
  return pythonHasKey(apps, appName) ? (apps[appName as string] as Row) : undefined;
}

export function fn(name: string, type: ToolType, params: string[], run: (device: Phone, args: Row) => unknown, defaults?: Row): Tau2Function {
  return { name, type, params, run: (context, args) => run(phone(context), args), ...(defaults ? { defaults } : {}) };
}

function permissionsList(permissions: Row): string[] {
  return Object.entries(permissions)
    .filter(([, allowed]) => allowed)
    .map(([name]) => name.replaceAll("_", " ").toLowerCase());
}

export const telecomUserTools: Tau2Function[] = [
  fn("check_status_bar", "read", [], (device) => `Status Bar: ${device.statusBar()}`),
  fn("check_network_status", "read", [], (device) => {
    const d = device.device;
    const lines = [
      `Airplane Mode: ${onOff(Boolean(d.airplane_mode))}`,
      `SIM Card Status: ${device.simStatus()}`,
      `Cellular Connection: ${d.network_connection_status}`,
      `Cellular Signal: ${d.network_signal_strength}`,
      `Cellular Network Type: ${d.network_technology_connected}`,
      `Mobile Data Enabled: ${d.data_enabled ? "Yes" : "No"}`,
      `Data Roaming Enabled: ${d.roaming_enabled ? "Yes" : "No"}`,
      `Wi-Fi Radio: ${onOff(Boolean(d.wifi_enabled))}`,
      `Wi-Fi Connected: ${d.wifi_connected ? "Yes" : "No"}`,
    ];
    if (d.wifi_connected) lines.push(`Connected Wi-Fi Network: ${d.wifi_ssid}`);
    return lines.join("\n");
  }),
  fn("check_network_mode_preference", "read", [], (device) => `Network Mode Preference: ${device.device.network_mode_preference}`),
  fn("set_network_mode_preference", "write", ["mode"], (device, { mode }) => {
    const failed = () => device.withBar(`Failed to set network mode: '${pythonStr(mode)}' is not a valid option. Please use one of: ${MODES.join(", ")}`);
    // tau2 converts only a str to its enum (an unknown one fails before any change); any other value is
    // stored as it is and searched with (the fallback is 4G), then None reads as a failure and anything
    // else fails on `.value`.
    if (typeof mode === "string" && !MODES.includes(mode)) return failed();
    device.setDevice({ network_mode_preference: mode ?? null });
    device.networkSearch();
    if (mode === null || mode === undefined) return failed();
    if (typeof mode !== "string") throw new PythonError("AttributeError", `'${pythonTypeName(mode)}' object has no attribute 'value'`);
    return device.withBar(`Preferred Network Mode set to: ${mode}`);
  }),
  fn("run_speed_test", "read", [], (device) => {
    const [speed, description] = device.speedTest();
    if (speed === null) return `Speed test failed: ${description || "Could not determine speed"}.`;
    const advice: Record<string, string> = {
      "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
      Poor: "Connection is slow. Web browsing may be sluggish, streaming difficult.",
      Fair: "Connection is okay for web browsing and some standard definition streaming.",
      Good: "Connection is good for most activities, including HD streaming.",
      Excellent: "Connection is very fast.",
    };
    return `Speed Test Result: ${speed.toFixed(2)} Mbps (${description}). ${advice[description] ?? ""}`;
  }),
  fn("toggle_airplane_mode", "write", [], (device) => device.withBar(`Airplane Mode is now ${onOff(device.toggleAirplane())}.`)),
  fn("check_sim_status", "read", [], (device) => {
    const messages: Record<string, string> = {
      active: "Your SIM card is active and working.",
      missing: "No SIM card detected in the phone.",
      locked_pin: "The SIM card is locked with a PIN code.",
      locked_puk: "The SIM card is locked with a PUK code.",
    };
    const status = device.simStatus();
    return messages[status] ?? `Unknown SIM status: ${status}`;
  }),
  fn("reseat_sim_card", "write", [], (device) => {
    device.setDevice({ sim_card_missing: false });
    device.networkSearch();
    return device.withBar("SIM card re-seated successfully.");
  }),
  fn("toggle_data", "write", [], (device) => device.withBar(`Mobile Data is now ${onOff(device.toggle("data_enabled", true))}.`)),
  fn("toggle_roaming", "write", [], (device) => device.withBar(`Data Roaming is now ${onOff(device.toggle("roaming_enabled", true))}.`)),
  fn("check_data_restriction_status", "read", [], (device) =>
    device.device.data_saver_mode ? "Data Saver mode is ON (limits data usage)." : "Data Saver mode is OFF.",
  ),
  fn("toggle_data_saver_mode", "write", [], (device) => device.withBar(`Data Saver Mode is now ${onOff(device.toggle("data_saver_mode", false))}.`)),
  fn("check_apn_settings", "read", [], (device) => {
    device.apnField("model_copy");
    const apn = device.apn;
    return `Current APN Name: ${apn.apn_name || "Not Set"}\nMMSC URL (for picture messages): ${apn.mmsc_url || "Not Set"}\n(These are technical settings, usually best left unchanged.)`;
  }),
  fn("set_apn_settings", "write", ["apn_settings"], (device, { apn_settings }) => {
    // `APNSettings(**apn_settings)` for a dict; anything else is stored as it is, then its `.apn_name` raises.
    const given = apn_settings instanceof Map ? Object.fromEntries(apn_settings) : apn_settings;
    if (given === null || typeof given !== "object" || Array.isArray(given)) {
      device.setDevice({ active_apn_settings: given ?? null });
      throw new PythonError("AttributeError", `'${pythonTypeName(given)}' object has no attribute 'apn_name'`);
    }
    const settings = device.own(buildModel("APNSettings", APN_FIELDS, given as Row));
    device.setDevice({ active_apn_settings: settings });
    device.networkSearch();
    return device.withBar(`APN settings set to: ${settings.apn_name}`);
  }),
  fn("reset_apn_settings", "write", [], (device) => {
    device.setApn({ reset_at_reboot: true });
    device.networkSearch();
    return device.withBar("APN settings will reset at reboot.");
  }),
  fn("check_wifi_status", "read", [], (device) => {
    const d = device.device;
    if (!d.wifi_enabled) return "Wi-Fi is turned OFF.";
    return d.wifi_connected
      ? `Wi-Fi is ON and connected to '${d.wifi_ssid}'. Signal strength: ${d.wifi_signal_strength}.`
      : "Wi-Fi is ON but not connected to any network.";
  }),
  fn("toggle_wifi", "write", [], (device) => {
    if (device.device.airplane_mode) return device.withBar("Cannot change Wi-Fi settings while Airplane Mode is ON.");
    const next = !device.device.wifi_enabled;
    device.setDevice({ wifi_enabled: next, ...(next ? {} : { wifi_connected: false, wifi_ssid: null, wifi_signal_strength: "none" }) });
    return device.withBar(`Wi-Fi is now ${onOff(next)}.`);
  }),
  fn("check_wifi_calling_status", "read", [], (device) => `Wi-Fi Calling is currently turned ${onOff(Boolean(device.device.wifi_calling_enabled))}.`),
  fn("toggle_wifi_calling", "write", [], (device) => device.withBar(`Wi-Fi Calling is now ${onOff(device.toggle("wifi_calling_enabled", false))}.`)),
  fn("check_vpn_status", "read", [], (device) => {
    const d = device.device;
    if (d.vpn_connected) {
      const details = d.vpn_details as Row | null;
      return details ? `VPN is ON and connected. Details: ${pyDictRepr(details)}` : "VPN is ON and connected (no specific details available).";
    }
    return d.vpn_enabled_setting ? "VPN is turned ON in settings, but currently not connected." : "VPN is turned OFF.";
  }),
  fn("connect_vpn", "write", [], (device) => {
    if (device.device.vpn_connected) return "VPN already connected.";
    device.setDevice({ vpn_connected: true, vpn_details: device.own({ server_address: "192.168.1.1", protocol: "OpenVPN", server_performance: "excellent" }) });
    return device.withBar("VPN connected successfully.");
  }),
  fn("disconnect_vpn", "write", [], (device) => {
    const connected = Boolean(device.device.vpn_connected);
    if (connected) device.setDevice({ vpn_connected: false, vpn_details: null });
    return device.withBar(connected ? "VPN disconnected successfully." : "No active VPN connection to disconnect.");
  }),
  fn(
    "check_installed_apps",
    "read",
    [],
    (device) => `The following apps are installed on the phone: ${Object.keys(device.device.app_statuses as Row).join(", ")}`,
  ),
  fn("check_app_status", "read", ["app_name"], (device, { app_name }) => {
    const app = appStatus(device, app_name);
    if (!app) return `App '${pythonStr(app_name)}' not found on this phone.`;
    const allowed = permissionsList(app.permissions as Row);
    const lines = [`Status for App: ${pythonStr(app_name)}`];
    if (allowed.length === 0) lines.push(" - Permissions: None granted.");
    else lines.push(" - Permissions Granted:", ...allowed.map((permission) => `   - ${permission}`));
    return lines.join("\n");
  }),
  fn("check_app_permissions", "read", ["app_name"], (device, { app_name }) => {
    const app = appStatus(device, app_name);
    if (!app) return `App '${pythonStr(app_name)}' not found on this phone.`;
    const allowed = permissionsList(app.permissions as Row);
    return allowed.length === 0
      ? `App '${pythonStr(app_name)}' currently has no permissions granted.`
      : `App '${pythonStr(app_name)}' has permission for: ${allowed.join(", ")}.`;
  }),
  fn("grant_app_permission", "write", ["app_name", "permission"], (device, { app_name, permission }) => {
    const app = appStatus(device, app_name);
    const name = pythonLower(permission);
    let message: string;
    if (!app) message = `Error. App '${pythonStr(app_name)}' not found. Cannot grant permission.`;
    else if (!Object.hasOwn(app.permissions as Row, name)) {
      const available = Object.keys(app.permissions as Row).map((key) => `'${key}'`);
      message = `Error. Permission '${name}' not tracked for app '${pythonStr(app_name)}', available permissions: [${available.join(", ")}]`;
    } else {
      device.writablePermissions(app_name as string)[name] = true;
      message = `Success. Permission '${name}' granted to app '${pythonStr(app_name)}'.`;
    }
    return device.withBar(message);
  }),
  fn("can_send_mms", "read", [], (device) =>
    device.canSendMms() ? "Your messaging app can send MMS messages." : "Your messaging app cannot send MMS messages.",
  ),
  fn("reboot_device", "write", [], (device) => {
    const lines: string[] = [];
    if (device.apnField("reset_at_reboot")) {
      lines.push("Resetting APN settings...");
      device.setDevice({ active_apn_settings: device.own(DEFAULT_APN()) });
    }
    lines.push("Restarting network services...");
    device.setDevice({ network_connection_status: "searching" });
    device.networkSearch();
    return device.withBar(lines.join("\n"));
  }),
  fn("check_payment_request", "read", [], (device) => {
    const request = device.surroundings.payment_request as Row | null;
    return request
      ? `You have a payment request for bill ${request.bill_id} of ${pythonFloatRepr(request.amount_due as number)} USD.`
      : "No payment request has been made.";
  }),
  fn("make_payment", "write", [], (device) => {
    const request = device.surroundings.payment_request as Row | null;
    if (!request) return "You do not have a payment request.";
    device.setSurroundings({ payment_request: device.own({ ...request, paid: true }) });
    return `Payment of ${pythonFloatRepr(request.amount_due as number)} USD has been made for bill ${request.bill_id}.`;
  }),
];

/** Python's repr of a flat dict of str/None values (the VPN details line). */
function pyDictRepr(value: Row): string {
  const item = (entry: unknown) => (entry === null ? "None" : typeof entry === "string" ? `'${entry}'` : String(entry));
  return `{${Object.entries(value)
    .map(([key, entry]) => `'${key}': ${item(entry)}`)
    .join(", ")}}`;
}

export { Phone };
