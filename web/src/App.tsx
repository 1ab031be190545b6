export function App() {
  return <h1>ARS</h1>;
}
