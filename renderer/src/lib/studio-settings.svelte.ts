// The studio's own preferences: kept in this browser (localStorage), not on the account, since
// they are about how this studio behaves, not about the flows. Each is read once at start and
// follows changes made in another tab of the same browser (the storage event).

const AUTOSAVE_KEY = 'voxflow.autosave';

function read(key: string, fallback: boolean): boolean {
  try {
    const value = localStorage.getItem(key);
    return value === null ? fallback : value === '1';
  } catch {
    return fallback;
  }
}

class StudioSettings {
  /** The editor saves the draft by itself after a pause in editing (on unless turned off). */
  autosave = $state(read(AUTOSAVE_KEY, true));

  constructor() {
    if (typeof window === 'undefined') return;
    window.addEventListener('storage', (event) => {
      if (event.key === AUTOSAVE_KEY) this.autosave = read(AUTOSAVE_KEY, true);
    });
  }

  setAutosave(on: boolean): void {
    this.autosave = on;
    try {
      localStorage.setItem(AUTOSAVE_KEY, on ? '1' : '0');
    } catch {
      // Storage refused (a private window's quota): the choice holds for this tab only.
    }
  }
}

export const studioSettings = new StudioSettings();
