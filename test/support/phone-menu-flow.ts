// A dental clinic's phone menu: keys move it, an account number is collected, and 0 hands the
// caller to the front desk (a cold transfer, back to the menu when it fails). Its lines are short:
// a line before a transfer, and the menu said again after a failed one, are heard out in real time.
export const FRONT_DESK = '+15551234567';

export const PHONE_MENU_YAML = `
id: front-desk
version: "1.0.0"
initial_state: menu
settings:
  base_system_prompt: You answer the phone for a dental clinic.
states:
  menu:
    ui: { artifact_type: card, prompt: "Main menu" }
    on_enter:
      say: Press 1 for your account, or 0 for the front desk.
    respond: false
    agent:
      prompt: Ask the caller to press 1 for their account or 0 for the front desk.
    dtmf:
      keys: { "1": account, "0": human }
  account:
    ui: { artifact_type: card, prompt: "Account number" }
    on_enter:
      say: Type your four digit account number, then the pound key.
    respond: false
    agent:
      prompt: Ask for the account number.
    dtmf:
      collect: { into: account_number, max_digits: 6, finish_on: "#", then: thanks }
  thanks:
    ui: { artifact_type: card, prompt: "Account {account_number}" }
    on_enter:
      say: Thank you. Press 0 for the front desk.
    respond: false
    agent:
      prompt: Thank the caller.
    dtmf:
      keys: { "0": human }
  human:
    ui: { artifact_type: card, prompt: "Connecting" }
    on_enter:
      say: Connecting you.
      transfer: { to: "${FRONT_DESK}", mode: cold, on_failed: menu }
    agent:
      prompt: The caller is being transferred.
`;
