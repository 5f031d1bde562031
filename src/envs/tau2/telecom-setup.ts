import { pythonStr } from "../../python-semantics/index.ts";
import { fn, type Phone } from "./telecom-device.ts";
import type { Tau2Function } from "./toolkit.ts";

/** tau2's telecom user-side functions only tasks call: the broken-phone set-ups and the assertions. */
type Row = Record<string, unknown>;
const turnOn = (device: Phone, field: "roaming_enabled" | "data_saver_mode", search: boolean) => {
  if (!device.toggle(field, search)) device.toggle(field, search);
};
const turnOff = (device: Phone, field: "roaming_enabled" | "data_enabled" | "data_saver_mode", search: boolean) => {
  if (device.toggle(field, search)) device.toggle(field, search);
};

export const telecomUserFunctions: Tau2Function[] = [
  fn("set_user_info", "write", ["name", "phone_number"], (device, { name, phone_number }) => {
    device.setSurroundings({ name, phone_number });
    return null;
  }),
  fn("set_user_location", "write", ["abroad"], (device, { abroad }) => {
    device.setSurroundings({ is_abroad: abroad });
    return null;
  }),
  fn("simulate_network_search", "write", [], (device) => {
    device.networkSearch();
    return null;
  }),
  fn("turn_airplane_mode_on", "write", [], (device) => {
    if (!device.toggleAirplane()) device.toggleAirplane();
    return "Airplane Mode is now ON.";
  }),
  fn("turn_roaming_on", "write", [], (device) => (turnOn(device, "roaming_enabled", true), "Data Roaming is now ON.")),
  fn("turn_roaming_off", "write", [], (device) => (turnOff(device, "roaming_enabled", true), "Data Roaming is now OFF.")),
  fn("turn_data_off", "write", [], (device) => (turnOff(device, "data_enabled", true), "Data connection broken.")),
  fn("turn_data_saver_mode_on", "write", [], (device) => (turnOn(device, "data_saver_mode", false), "Data Saver Mode is now ON.")),
  fn("unseat_sim_card", "write", [], (device) => {
    device.setDevice({ sim_card_missing: true });
    device.networkSearch();
    return "SIM card un-seated successfully.";
  }),
  fn("lock_sim_card", "write", ["mode"], (device, { mode }) => {
    if (mode === "pin") device.setDevice({ sim_card_status: "locked_pin" });
    else if (mode === "puk") device.setDevice({ sim_card_status: "locked_puk" });
    device.networkSearch();
    return `SIM card locked successfully in ${pythonStr(mode)} mode.`;
  }),
  fn("break_apn_settings", "write", [], (device) => {
    device.setApn({ apn_name: "broken" });
    device.networkSearch();
    return "APN settings broken. Please call reset_apn_settings() to fix.";
  }),
  fn("break_apn_mms_setting", "write", [], (device) => {
    device.setApn({ mmsc_url: null });
    return "APN MMS setting broken. Please call reset_apn_settings() to fix.";
  }),
  fn("break_vpn", "write", [], (device) => {
    if (!device.device.vpn_connected) {
      device.setDevice({
        vpn_connected: true,
        vpn_details: device.own({ server_address: "192.168.1.1", protocol: "OpenVPN", server_performance: "excellent" }),
      });
    }
    device.setDevice({ vpn_details: device.own({ ...(device.device.vpn_details as Row), server_performance: "poor" }) });
    return "VPN connection broken.";
  }),
  fn("remove_app_permission", "write", ["app_name", "permission"], (device, { app_name, permission }) => {
    const name = String(permission).toLowerCase();
    const app = (device.device.app_statuses as Row)[app_name as string] as Row | undefined;
    if (!app || !Object.hasOwn(app.permissions as Row, name)) return null;
    device.writablePermissions(app_name as string)[name] = false;
    return null;
  }),
  fn(
    "set_wifi_calling",
    "write",
    ["enabled", "mms_over_wifi"],
    (device, { enabled, mms_over_wifi }) => {
      if (device.device.wifi_calling_enabled !== enabled) device.toggle("wifi_calling_enabled", false);
      if (mms_over_wifi !== null && mms_over_wifi !== undefined) device.setDevice({ wifi_calling_mms_over_wifi: mms_over_wifi });
      return null;
    },
    { mms_over_wifi: null },
  ),
  fn("assert_service_status", "read", ["expected_status"], (device, { expected_status }) => device.device.network_connection_status === expected_status),
  fn("assert_mobile_data_status", "read", ["expected_status"], (device, { expected_status }) => device.mobileDataWorking() === expected_status),
  fn(
    "assert_internet_speed",
    "read",
    ["expected_speed", "expected_desc"],
    (device, { expected_speed, expected_desc }) => {
      const [speed, description] = device.speedTest();
      const value = speed ?? 0;
      if (expected_desc == null) return value >= (expected_speed as number);
      return value >= (expected_speed as number) && description.toLowerCase() === String(expected_desc).toLowerCase();
    },
    { expected_desc: null },
  ),
  fn("assert_can_send_mms", "read", ["expected_status"], (device, { expected_status }) => device.canSendMms() === expected_status),
  fn("assert_airplane_mode_status", "read", ["expected_status"], (device, { expected_status }) => device.device.airplane_mode === expected_status),
];
