/**
 * A confirmation before an action a person may regret (cancel a job, uncordon, overwrite a
 * reason): a modal `<dialog>` (focus kept inside, Escape answers no) naming what will happen.
 *
 *   const [dialog, confirm] = useConfirm();
 *   if (await confirm({ title: "Cancel job?", confirm: "Cancel job", danger: true })) …
 *   return <>{dialog}…</>;
 */
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";

export interface ConfirmOptions {
  title: string;
  /** What will happen, in a sentence or two (the reason that will be removed, the devices, …). */
  body?: ReactNode;
  /** The confirming button's label: the action itself ("Uncordon"), never "OK". */
  confirm: string;
  /** The action destroys or removes something: the button is styled as such. */
  danger?: boolean;
}

interface Pending extends ConfirmOptions {
  resolve(yes: boolean): void;
}

export function useConfirm(): [ReactNode, (o: ConfirmOptions) => Promise<boolean>] {
  const [pending, setPending] = useState<Pending | undefined>();
  const ask = useCallback((o: ConfirmOptions) => new Promise<boolean>((resolve) => setPending({ ...o, resolve })), []);
  const answer = (yes: boolean) => {
    pending?.resolve(yes);
    setPending(undefined);
  };
  return [pending ? <ConfirmDialog key={pending.title} o={pending} answer={answer} /> : null, ask];
}

function ConfirmDialog({ o, answer }: { o: ConfirmOptions; answer(yes: boolean): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        answer(false);
      }}
    >
      <h2 id="confirm-title">{o.title}</h2>
      {o.body !== undefined && <div className="confirm-body">{o.body}</div>}
      <p className="actions">
        <button type="button" onClick={() => answer(false)} autoFocus>
          Keep as it is
        </button>
        <button type="button" className={o.danger ? "danger" : undefined} onClick={() => answer(true)}>
          {o.confirm}
        </button>
      </p>
    </dialog>
  );
}
