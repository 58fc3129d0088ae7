// Some run-time attacks of tests/judge/attacks/bots/*.py, in Java: one program, the attack named
// by Params.NAME (Params.java, written by the test next to this file, then built in the sandbox
// by the real javac). Never run it outside the sandbox.
//
// Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when the
// sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise plays
// the first legal action of every decision.
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

public class Attack {
    interface Action {
        Object run() throws Exception;
    }

    static void evidence(String outcome, String detail) {
        System.err.println("ATTACK " + Params.NAME + " " + outcome + ": " + detail);
        System.err.flush();
    }

    // An exception means that the sandbox stopped it, a return that it did not.
    static void mustFail(String label, Action action) {
        Object result;
        try {
            result = action.run();
        } catch (Throwable error) {
            evidence("blocked", label + ": " + error);
            return;
        }
        evidence("SUCCEEDED", label + ": " + result);
    }

    // Status 0 is "it ran": the attack got through.
    static Object run(String... argv) throws Exception {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly();
        int status = process.exitValue();
        if (status != 0) throw new Exception("status " + status);
        return "it ran";
    }

    static void memoryBalloon() {
        List<byte[]> held = new ArrayList<>();
        try {
            for (int i = 0; i < 4096; i++) { // up to 64 GiB
                byte[] block = new byte[16 << 20];
                java.util.Arrays.fill(block, (byte) 1);
                held.add(block);
            }
        } catch (OutOfMemoryError error) {
            int size = 16 * held.size();
            held.clear();
            evidence("blocked", "OutOfMemoryError after " + size + " MiB");
            return;
        }
        evidence("SUCCEEDED", "allocated " + 16 * held.size() + " MiB");
    }

    static void execWritten() throws Exception {
        int written = 0;
        for (String folder : new String[] {"/tmp", "/dev/shm", "/bot", "/"}) {
            String elf = folder + "/x-elf", script = folder + "/x-script";
            try {
                Files.copy(
                        Path.of("/usr/bin/true"), Path.of(elf), StandardCopyOption.REPLACE_EXISTING);
                new File(elf).setExecutable(true, false);
                written++;
                mustFail("execve " + elf, () -> run(elf));
                mustFail("ld.so " + elf, () -> run("/lib64/ld-linux-x86-64.so.2", elf));
            } catch (java.io.IOException error) {
                evidence("blocked", "cannot write " + elf + ": " + error);
            }
            try {
                Files.writeString(Path.of(script), "#!/bin/sh\nexit 0\n");
                new File(script).setExecutable(true, false);
                written++;
                mustFail("execve " + script, () -> run(script));
            } catch (java.io.IOException error) {
                evidence("blocked", "cannot write " + script + ": " + error);
            }
        }
        if (written == 0) evidence("ERROR", "wrote no program anywhere");
    }

    static void network() {
        for (int port : new int[] {5432, 6379, Params.PORT}) {
            mustFail(
                    "connect 127.0.0.1:" + port,
                    () -> {
                        try (Socket socket = new Socket()) {
                            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                            return "connected";
                        }
                    });
        }
    }

    static void readProject() {
        for (String path :
                new String[] {
                    Params.REPO + "/pyproject.toml",
                    Params.REPO + "/config/settings.py",
                    "/etc/passwd",
                    "/proc/" + Params.JUDGE_PID + "/environ"
                }) {
            mustFail("read " + path, () -> Files.readString(Path.of(path)).length());
        }
    }

    static void writeOutside() {
        for (String path :
                new String[] {
                    "/bot/pwned", "/bot/Attack.class", "/pwned", "/usr/pwned", "/etc/pwned",
                    "/dev/shm/pwned", Params.DROPBOX + "/pwned", Params.REPO + "/pwned"
                }) {
            mustFail("write " + path, () -> Files.writeString(Path.of(path), "pwned"));
        }
    }

    static void attack() throws Exception {
        switch (Params.NAME) {
            case "memory_balloon" -> memoryBalloon();
            case "exec_written" -> execWritten();
            case "net_postgres" -> network();
            case "read_project" -> readProject();
            case "write_outside" -> writeOutside();
            default -> {}
        }
    }

    public static void main(String[] args) throws Exception {
        if (Params.NAME.equals("exit_at_once")) {
            evidence("attempting", "exiting");
            return;
        }
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            JsonObject message = JsonParser.parseString(line).getAsJsonObject();
            String type = message.has("type") ? message.get("type").getAsString() : "";
            if (type.equals("hello")) {
                attack();
                out.print("{\"type\":\"ready\",\"name\":\"attacker-java\"}\n");
                out.flush();
            } else if (type.equals("act")) {
                if (Params.NAME.equals("cpu_spin")) {
                    evidence("attempting", "spinning");
                    for (long i = 0; ; i++) {
                        if (i == Long.MIN_VALUE) System.err.print("");
                    }
                }
                if (Params.NAME.equals("sleep_forever")) {
                    evidence("attempting", "sleeping forever");
                    Thread.sleep(Long.MAX_VALUE);
                }
                JsonObject reply = new JsonObject();
                reply.add("id", message.get("id"));
                reply.add("action", message.getAsJsonArray("legal_actions").get(0));
                out.print(reply + "\n");
                out.flush();
            } else if (type.equals("bye")) {
                break;
            }
        }
    }
}
