// The run-time attacks of tests/judge/attacks/bots/*.py that the JVM can express, in Java: one
// program, built once for every test (by the real javac in the build sandbox), the attack named
// by /bot/params.json, which the test adds to each copy of the build. Never run it outside the
// sandbox.
//
// Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when the
// sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise plays
// the first legal action of every decision. The JVM has no fork, ptrace, signal or raw system
// call: its processes are ProcessBuilder's, its signals ProcessHandle.destroy's.
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

public class Attack {
    interface Action {
        Object run() throws Exception;
    }

    static void evidence(String outcome, String detail) {
        System.err.println("ATTACK " + Params.NAME + " " + outcome + ": " + detail);
        System.err.flush();
    }

    static void blocked(String detail) {
        evidence("blocked", detail);
    }

    static void succeeded(String detail) {
        evidence("SUCCEEDED", detail);
    }

    // An exception means that the sandbox stopped it, a return that it did not; but refused by
    // the task limit (no thread to wait for a process, or no process), it tested nothing.
    static void mustFail(String label, Action action) {
        Object result;
        try {
            result = action.run();
        } catch (Throwable error) {
            String text = String.valueOf(error.getMessage());
            boolean noTask = text.contains("unable to create native thread") || text.contains("error=11,");
            evidence(noTask ? "ERROR" : "blocked", label + ": " + error);
            return;
        }
        succeeded(label + ": " + result);
    }

    // Status 0 is "it ran": the attack got through.
    static Object run(String... argv) throws Exception {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly();
        int status = process.exitValue();
        if (status != 0) throw new Exception("status " + status);
        return "it ran";
    }

    // A child process under the test's process name (what the test looks for after the table):
    // the shell, run through a link of that name in /tmp (the kernel names a process after the
    // path it executes; the JVM cannot name a process itself), running ``script``. A Java bot's
    // sandbox has no other interpreter; ``read x`` waits on the child's stdin, which the JVM
    // holds open.
    static ProcessBuilder namedChild(String script) throws IOException {
        Path link = Path.of("/tmp", Params.PROCESS_NAME);
        if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
            Files.createSymbolicLink(link, Path.of("/bin/sh"));
        }
        return new ProcessBuilder(link.toString(), "-c", script)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
    }

    static void memoryBalloon() {
        List<byte[]> held = new ArrayList<>();
        try {
            for (int i = 0; i < 4096; i++) { // up to 64 GiB
                byte[] block = new byte[16 << 20];
                Arrays.fill(block, (byte) 1);
                held.add(block);
            }
        } catch (OutOfMemoryError error) {
            int size = 16 * held.size();
            held.clear();
            blocked("OutOfMemoryError after " + size + " MiB");
            return;
        }
        succeeded("allocated " + 16 * held.size() + " MiB");
    }

    // Off the heap: direct buffers, bounded by -XX:MaxDirectMemorySize (the heap's size) or by
    // the address space, whichever it reaches first.
    static void directBalloon() {
        List<ByteBuffer> held = new ArrayList<>();
        try {
            for (int i = 0; i < 4096; i++) {
                ByteBuffer block = ByteBuffer.allocateDirect(16 << 20);
                while (block.hasRemaining()) block.put((byte) 1);
                held.add(block);
            }
        } catch (OutOfMemoryError error) {
            int size = 16 * held.size();
            held.clear();
            blocked("OutOfMemoryError after " + size + " MiB of direct buffers: " + error);
            return;
        }
        succeeded("allocated " + 16 * held.size() + " MiB of direct buffers");
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
                blocked("cannot write " + elf + ": " + error);
            }
            try {
                Files.writeString(Path.of(script), "#!/bin/sh\nexit 0\n");
                new File(script).setExecutable(true, false);
                written++;
                mustFail("execve " + script, () -> run(script));
            } catch (java.io.IOException error) {
                blocked("cannot write " + script + ": " + error);
            }
        }
        if (written == 0) evidence("ERROR", "wrote no program anywhere");
    }

    static void network() {
        for (String host : new String[] {"127.0.0.1", "::1", "1.1.1.1"}) {
            for (int port : new int[] {5432, 6379, 443, Params.PORT}) {
                mustFail(
                        "connect " + host + ":" + port,
                        () -> {
                            try (Socket socket = new Socket()) {
                                socket.connect(new InetSocketAddress(host, port), 2000);
                                return "connected";
                            }
                        });
            }
        }
        mustFail(
                "udp datagram",
                () -> {
                    try (DatagramSocket socket = new DatagramSocket()) {
                        byte[] data = "pwned".getBytes(StandardCharsets.UTF_8);
                        socket.send(
                                new DatagramPacket(
                                        data, data.length, new InetSocketAddress("8.8.8.8", 53)));
                        return "sent";
                    }
                });
    }

    static void readProject() {
        for (String path :
                new String[] {
                    Params.REPO + "/pyproject.toml",
                    Params.REPO + "/config/settings.py",
                    "/work/main/manage.py",
                    "/etc/passwd",
                    "/etc/shadow",
                    "/root/.bashrc",
                    "/proc/" + Params.JUDGE_PID + "/environ"
                }) {
            mustFail("read " + path, () -> Files.readString(Path.of(path)).length());
        }
    }

    static void secrets() throws Exception {
        List<String> found = new ArrayList<>();
        String[] keys = {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"};
        for (String key : keys) {
            if (System.getenv(key) != null) found.add(key);
            for (String path : new String[] {"/proc/self/environ", "/proc/1/environ"}) {
                String data = new String(Files.readAllBytes(Path.of(path)), StandardCharsets.ISO_8859_1);
                if (data.contains(key)) found.add(key + " in " + path);
            }
        }
        long self = ProcessHandle.current().pid();
        List<Long> others = new ArrayList<>();
        ProcessHandle.allProcesses().filter(p -> p.pid() != self).forEach(p -> others.add(p.pid()));
        boolean parent = ProcessHandle.current().parent().isPresent();
        String detail =
                "secrets " + found + ", pid " + self + ", other processes " + others
                        + (parent ? ", a parent" : ", no parent");
        if (found.isEmpty() && others.isEmpty() && self == 1 && !parent) blocked(detail);
        else succeeded(detail);
    }

    static int searchMark(File folder, byte[] mark, int depth) {
        File[] entries = folder.listFiles();
        if (entries == null || depth > 12) return 0;
        int hits = 0;
        for (File entry : entries) {
            String path = entry.getPath();
            if (Files.isSymbolicLink(entry.toPath())
                    || Arrays.asList("/proc", "/usr", "/sys", "/dev").contains(path)) continue;
            if (entry.isDirectory()) {
                hits += searchMark(entry, mark, depth + 1);
            } else if (entry.isFile()) {
                try {
                    byte[] data = Files.readAllBytes(entry.toPath());
                    String text = new String(data, StandardCharsets.ISO_8859_1);
                    if (text.contains(new String(mark, StandardCharsets.ISO_8859_1))) {
                        evidence("attempting", "the mark is in " + path);
                        hits++;
                    }
                } catch (Exception | OutOfMemoryError error) {
                    // unreadable: nothing found
                }
            }
        }
        return hits;
    }

    static void readOtherBot() {
        // made at run time: javac would join two constants, and this very program is searched
        String reversed = new StringBuilder("TERCES-MITCIV").reverse().toString();
        byte[] mark = reversed.getBytes(StandardCharsets.ISO_8859_1);
        int hits = searchMark(new File("/"), mark, 0);
        if (new File(Params.WORKDIR + "/seat1/main.py").canRead()) hits++;
        if (hits > 0) succeeded("found another bot's code " + hits + " times");
        else blocked("searched /: no other bot");
    }

    static void writeOutside() {
        for (String path :
                new String[] {
                    "/bot/pwned", "/bot/Attack.class", "/pwned", "/usr/pwned", "/etc/pwned",
                    "/dev/shm/pwned", "/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern",
                    Params.DROPBOX + "/pwned", Params.REPO + "/pwned"
                }) {
            mustFail("write " + path, () -> Files.writeString(Path.of(path), "pwned"));
        }
        mustFail("mkdir /bot/dir", () -> Files.createDirectory(Path.of("/bot/dir")));
        try {
            Files.writeString(Path.of(Params.HOST_TMP_MARKER), "pwned"); // the sandbox's own /tmp
        } catch (java.io.IOException error) {
            evidence("ERROR", "cannot write in /tmp: " + error);
        }
        blocked("wrote the /tmp marker: private to the sandbox (the test checks the host)");
    }

    static void fillTmp() {
        byte[] chunk = new byte[1 << 20];
        Arrays.fill(chunk, (byte) 'x');
        long written = 0;
        try {
            for (int i = 0; i < 1024; i++) {
                try (var out = Files.newOutputStream(Path.of("/tmp/fill" + i))) {
                    for (int k = 0; k < 4; k++) {
                        out.write(chunk);
                        written += chunk.length;
                    }
                }
            }
        } catch (java.io.IOException error) {
            blocked("/tmp full after " + (written >> 20) + " MiB: " + error);
            return;
        }
        succeeded("wrote " + (written >> 20) + " MiB to /tmp");
    }

    // Children until refused (ProcessBuilder, or the JVM's thread that waits for each); then
    // they are destroyed.
    static void forkBomb() {
        List<Process> children = new ArrayList<>();
        Throwable refused = null;
        while (children.size() < 200) {
            try {
                children.add(namedChild("read x").start());
            } catch (Throwable error) {
                refused = error;
                break;
            }
        }
        String detail = "process refused after " + children.size() + " children: " + refused;
        children.forEach(Process::destroyForcibly);
        if (refused != null && children.size() < 64) blocked(detail);
        else succeeded(detail);
    }

    static void threadBomb() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        Throwable refused = null;
        while (threads.size() < 10000) {
            Runnable wait =
                    () -> {
                        try {
                            release.await();
                        } catch (InterruptedException error) {
                            // ends
                        }
                    };
            // small stacks: the task limit must refuse them, not the address space (with 1 MiB
            // stacks it runs out first, and the JVM dies of it later)
            Thread thread = new Thread(null, wait, "bomb", 64 << 10);
            try {
                thread.start();
            } catch (Throwable error) {
                refused = error;
                break;
            }
            threads.add(thread);
        }
        release.countDown();
        for (Thread thread : threads) thread.join();
        String detail = "thread refused after " + threads.size() + " threads: " + refused;
        if (refused != null && threads.size() < 64) blocked(detail);
        else succeeded(detail);
    }

    // A child that writes outside until killed.
    static void daemon() throws Exception {
        String script =
                "for path in '"
                        + Params.DROPBOX
                        + "/daemon-alive' '"
                        + Params.HOST_TMP_MARKER
                        + "'; do echo alive > \"$path\" 2>/dev/null; done; read x";
        // (no /usr/bin/setsid: the sandbox refuses setsid, docs/sandbox.md "Host-wide channels")
        List<String> command = new ArrayList<>(namedChild(script).command());
        new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        // alive once it wrote its marker (in this sandbox's own /tmp, the one path it can write)
        for (int i = 0; i < 100 && !Files.exists(Path.of(Params.HOST_TMP_MARKER)); i++) {
            Thread.sleep(30);
        }
        if (Files.exists(Path.of(Params.HOST_TMP_MARKER))) {
            blocked("daemon started; the test checks that it died with the table");
        } else {
            evidence("ERROR", "the daemon never wrote its marker");
        }
    }

    // ProcessHandle.destroyForcibly is SIGKILL: every process it can see, the judge's pid, its
    // parent; then kill(-1) itself, through /usr/bin/kill.
    static void kill() {
        long self = ProcessHandle.current().pid();
        mustFail(
                "destroy the judge's pid",
                () -> ProcessHandle.of(Params.JUDGE_PID).orElseThrow().destroyForcibly());
        if (Params.NAME.equals("kill_all")) {
            List<Long> destroyed = new ArrayList<>();
            ProcessHandle.allProcesses()
                    .filter(p -> p.pid() != self && p.destroyForcibly())
                    .forEach(p -> destroyed.add(p.pid()));
            if (destroyed.isEmpty()) blocked("no other process to destroy");
            else succeeded("destroyed " + destroyed);
            // kill(-1) from a child: it may reach the sandbox's own processes, never this JVM
            // (pid 1 of the namespace) nor anything outside (the test checks the table and the
            // other seats); this JVM still answering is the evidence
            try {
                Process kill = new ProcessBuilder("/usr/bin/kill", "-9", "-1").start();
                kill.waitFor(10, TimeUnit.SECONDS);
                blocked("kill -9 -1 (status " + kill.exitValue() + ") left this JVM alive");
            } catch (Throwable error) {
                evidence("ERROR", "kill -9 -1 did not run: " + error);
            }
        } else {
            mustFail(
                    "destroy its parent",
                    () -> ProcessHandle.current().parent().orElseThrow().destroyForcibly());
        }
    }

    static void attack() throws Exception {
        switch (Params.NAME) {
            case "memory_balloon" -> memoryBalloon();
            case "direct_balloon" -> directBalloon();
            case "exec_written" -> execWritten();
            case "net_postgres", "net_redis", "net_public", "net_listener" -> network();
            case "read_project" -> readProject();
            case "read_secret_key", "read_proc1_environ", "read_parent_env" -> secrets();
            case "read_other_bot" -> readOtherBot();
            case "write_outside" -> writeOutside();
            case "fill_tmp" -> fillTmp();
            case "fork_bomb" -> forkBomb();
            case "thread_bomb" -> threadBomb();
            case "daemon" -> daemon();
            case "kill_parent", "kill_all" -> kill();
            default -> {}
        }
    }

    // the protocol
    static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    static void send(String text) {
        OUT.print(text);
        OUT.flush();
    }

    static void answer(JsonObject message, JsonElement action, int idDelta) {
        JsonObject reply = new JsonObject();
        reply.addProperty("id", message.get("id").getAsInt() + idDelta);
        reply.add("action", action);
        send(reply + "\n");
    }

    // At the first act: misbehave instead of answering. Returns true if it did.
    static boolean misbehave(JsonObject message) throws Exception {
        int id = message.get("id").getAsInt();
        switch (Params.NAME) {
            case "flood_stdout" -> {
                byte[] chunk = new byte[1 << 20];
                Arrays.fill(chunk, (byte) 'x');
                for (int i = 0; i < 10; i++) OUT.write(chunk);
                OUT.flush();
            }
            case "huge_line" -> {
                OUT.print("{\"id\":" + id + ",\"action\":\"");
                byte[] chunk = new byte[1000000];
                Arrays.fill(chunk, (byte) 'A');
                for (int i = 0; i < 100; i++) OUT.write(chunk);
                send("\"}\n");
            }
            case "invalid_utf8" -> {
                OUT.write(("{\"id\":" + id + ",\"action\":\"").getBytes(StandardCharsets.UTF_8));
                OUT.write(new byte[] {(byte) 0xff, (byte) 0xfe, (byte) 0xc3, (byte) 0x28});
                send("\"}\n");
            }
            case "illegal_card" -> answer(message, JsonParser.parseString("\"ZZ\""), 0);
            case "wrong_id" -> answer(message, message.getAsJsonArray("legal_actions").get(0), 1000);
            case "cpu_spin" -> {
                evidence("attempting", "spinning");
                for (long i = 0; ; i++) {
                    if (i == Long.MIN_VALUE) System.err.print("");
                }
            }
            case "sleep_forever" -> {
                evidence("attempting", "sleeping forever");
                Thread.sleep(Long.MAX_VALUE);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    public static void main(String[] args) throws Exception {
        if (Params.NAME.equals("exit_at_once")) {
            evidence("attempting", "exiting");
            return;
        }
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int acts = 0;
        while ((line = in.readLine()) != null) {
            JsonObject message = JsonParser.parseString(line).getAsJsonObject();
            String type = message.has("type") ? message.get("type").getAsString() : "";
            if (type.equals("hello")) {
                attack();
                String ready = "{\"type\":\"ready\",\"name\":\"attacker-java\"}\n";
                // one write: the early answer is surely there before the first request
                send(Params.NAME.equals("answer_early") ? ready + "{\"id\":1,\"action\":\"2C\"}\n" : ready);
                if (Params.NAME.equals("close_stdout")) {
                    System.out.close();
                    evidence("attempting", "stdout closed");
                }
                if (Params.NAME.equals("flood_stderr")) {
                    String chunk = "e".repeat((1 << 16) - 1);
                    for (int i = 0; i < 160; i++) System.err.println(chunk);
                }
            } else if (type.equals("act")) {
                // an illegal card or a wrong id at every act, as in Python: the seat is replaced
                boolean again = Params.NAME.equals("illegal_card") || Params.NAME.equals("wrong_id");
                if (!((acts++ == 0 || again) && misbehave(message))) {
                    answer(message, message.getAsJsonArray("legal_actions").get(0), 0);
                }
            } else if (type.equals("bye")) {
                break;
            }
        }
    }
}

// What the test tells the bot (/bot/params.json): host paths, ports, tokens.
final class Params {
    static final JsonObject JSON = read();
    static final String NAME = JSON.get("name").getAsString();
    static final String REPO = JSON.get("repo").getAsString();
    static final int PORT = JSON.get("port").getAsInt();
    static final String DROPBOX = JSON.get("dropbox").getAsString();
    static final String HOST_TMP_MARKER = JSON.get("host_tmp_marker").getAsString();
    static final int JUDGE_PID = JSON.get("judge_pid").getAsInt();
    static final String WORKDIR = JSON.get("workdir").getAsString();
    static final String PROCESS_NAME = JSON.get("process_name").getAsString();

    static JsonObject read() {
        try {
            return JsonParser.parseString(Files.readString(Path.of("/bot/params.json")))
                    .getAsJsonObject();
        } catch (java.io.IOException error) {
            throw new UncheckedIOException(error);
        }
    }
}
