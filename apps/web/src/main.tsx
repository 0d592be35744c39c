import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { ApiError, HubUnreachable } from "./api.ts";
import { App } from "./app.tsx";
import { ErrorBoundary } from "./ui.tsx";
import "./styles.css";

const queries = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; an outage might. An unreachable hub is the shell's
      // banner's to retry: every active query is asked again once the hub answers.
      retry: (count, err) =>
        !(err instanceof ApiError && err.status < 500) && !(err instanceof HubUnreachable) && count < 2,
      staleTime: 5_000,
      refetchOnWindowFocus: false,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <ErrorBoundary>
        <App />
      </ErrorBoundary>
    </QueryClientProvider>
  </StrictMode>,
);
