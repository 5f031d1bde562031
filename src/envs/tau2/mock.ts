import { lazy, mapValues, pick, readJsonAsset } from "./data.ts";
import type { Tau2Domain } from "./environment.ts";
import { PythonError, pythonHasKey, pythonStr } from "../../python-semantics/index.ts";
import { validateModel } from "./pydantic.ts";
import { deepFreeze } from "./store.ts";
import { model, type Tau2Function, type ToolContext, type ToolType } from "./toolkit.ts";

/** tau2's mock domain: tasks and users on the agent side, notifications on the user side. */
type Row = Record<string, unknown>;

export function normalizeMockAgent(raw: Row): Row {
  return {
    tasks: mapValues(raw.tasks, (task) => pick(task, ["task_id", "title", "description", "status"])),
    users: mapValues(raw.users, (user) => pick(user, ["user_id", "name", "tasks"])),
  };
}

export function normalizeMockUser(raw: Row): Row {
  return { notifications: mapValues(raw.notifications, (item) => pick(item, ["notification_id", "message", "status", "task_id"])) };
}

const agentDb = lazy(() => deepFreeze(normalizeMockAgent(readJsonAsset<Row>("domains/mock/db.json"))));
const userDb = lazy(() => deepFreeze(normalizeMockUser(readJsonAsset<Row>("domains/mock/user_db.json"))));

function tool(name: string, type: ToolType, params: string[], run: Tau2Function["run"], defaults?: Row): Tau2Function {
  return { name, type, params, run, ...(defaults ? { defaults } : {}) };
}

function table(root: Row, name: string, owner: string): Row {
  const value = root[name];
  if (value === undefined) throw new PythonError("AttributeError", `'${owner}' object has no attribute '${name}'`);
  return value as Row;
}

function requireTask(context: ToolContext, taskId: unknown): Row {
  const tasks = table(context.agent.root, "tasks", "MockDB");
  if (!pythonHasKey(tasks, taskId)) throw new PythonError("ValueError", `Task ${pythonStr(taskId)} not found`);
  return tasks[taskId as string] as Row;
}

function userStore(context: ToolContext) {
  if (!context.user) throw new PythonError("ValueError", "User tools not available");
  return context.user;
}

function requireNotification(context: ToolContext, notificationId: unknown): Row {
  const notifications = table(userStore(context).root, "notifications", "MockDB");
  if (!pythonHasKey(notifications, notificationId)) throw new PythonError("ValueError", `Notification ${pythonStr(notificationId)} not found`);
  return notifications[notificationId as string] as Row;
}

const agentTools: Tau2Function[] = [
  tool(
    "create_task",
    "write",
    ["user_id", "title", "description"],
    (context, { user_id, title, description }) => {
      const users = table(context.agent.root, "users", "MockDB");
      if (!pythonHasKey(users, user_id)) throw new PythonError("ValueError", `User ${pythonStr(user_id)} not found`);
      const taskId = `task_${Object.keys(table(context.agent.root, "tasks", "MockDB")).length + 1}`;
      validateModel("Task", [
        ["title", "str", title],
        ["description", "optional_str", description],
      ]);
      const task = context.agent.own({ task_id: taskId, title, description: description ?? null, status: "pending" });
      context.agent.writable(["tasks"])[taskId] = task;
      const user = context.agent.writable(["users", user_id as string]);
      user.tasks = [...(user.tasks as unknown[]), taskId];
      return model(task);
    },
    { description: null },
  ),
  tool("get_users", "read", [], (context) => Object.values(table(context.agent.root, "users", "MockDB")).map(model)),
  tool("update_task_status", "write", ["task_id", "status"], (context, { task_id, status }) => {
    requireTask(context, task_id);
    // tau2 assigns without validation, so any status string is stored.
    const task = context.agent.writable(["tasks", task_id as string]);
    task.status = status;
    return model(task);
  }),
  tool("transfer_to_human_agents", "generic", ["summary"], () => "Transfer successful"),
];

const agentFunctions: Tau2Function[] = [
  tool("assert_task_status", "read", ["task_id", "expected_status"], (context, { task_id, expected_status }) => {
    return requireTask(context, task_id).status === expected_status;
  }),
];

const userTools: Tau2Function[] = [
  tool("check_notifications", "read", [], (context) => Object.values(table(userStore(context).root, "notifications", "MockDB")).map(model)),
  tool("dismiss_notification", "write", ["notification_id"], (context, { notification_id }) => {
    requireNotification(context, notification_id);
    userStore(context).writable(["notifications", notification_id as string]).status = "read";
    return `Notification ${pythonStr(notification_id)} dismissed`;
  }),
];

const userFunctions: Tau2Function[] = [
  tool(
    "add_notification",
    "write",
    ["notification_id", "message", "task_id"],
    (context, { notification_id, message, task_id }) => {
      const store = userStore(context);
      store.writable(["notifications"])[notification_id as string] = store.own({ notification_id, message, status: "unread", task_id: task_id ?? null });
      return null;
    },
    { task_id: null },
  ),
  tool("assert_notification_status", "read", ["notification_id", "expected_status"], (context, { notification_id, expected_status }) => {
    return requireNotification(context, notification_id).status === expected_status;
  }),
];

export const mockDomain: Tau2Domain = {
  id: "mock",
  tools: { className: "MockTools", tools: agentTools, functions: agentFunctions, side: "agent" },
  userTools: { className: "MockUserTools", tools: userTools, functions: userFunctions, side: "user" },
  floatKeys: new Set(),
  agentDb,
  userDb,
  normalizeAgent: normalizeMockAgent,
  normalizeUser: normalizeMockUser,
};
