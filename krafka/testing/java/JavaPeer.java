import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RetriableCommitFailedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Apache Kafka's Java client as a peer for tests: one role per process, driven by its command line,
 * JSON lines on stdout (one object per line, {"event": ...}), commands as lines on stdin. Bytes
 * (keys, values, header values) travel as base64, null as null. Every wait is bounded and the
 * whole process is bounded by --timeout (seconds): it always ends with a "done" or "error" event.
 *
 *   produce        [--topic T] [--codec C] [--transactional-id ID] [--idempotent true|false]
 *                  stdin: {"value","key","headers":[[k,v]],"partition","timestamp","codec","topic"}
 *                  and {"op": "begin"|"commit"|"abort"|"flush"}; abort flushes first, so the aborted
 *                  records reach the log. Out: "sent" per record (index, partition, offset,
 *                  timestamp), "begun"/"committed"/"aborted"/"flushed" per op.
 *   consume        --topics A,B [--group G] [--isolation read_committed] [--count N] [--idle S]
 *                  Without --group: every partition assigned, from the beginning, until each
 *                  position reaches the end offset read at start (or --count). Out: "record"s.
 *   group-member   --topics A,B --group G [--protocol classic|consumer] [--strategy S]
 *                  [--close default|leave_group|remain_in_group]
 *                  stdin "wakeup" calls consumer.wakeup() from the stdin thread; a poll that
 *                  raises WakeupException prints "woken" and the member polls on.
 *                  Consumes, commits after processing each poll (and in onPartitionsRevoked), until
 *                  "stop" on stdin, stdin closed or --duration. Out: "assigned"/"revoked"/"lost"
 *                  (the delta and the whole assignment), "record"s; stdin "assignment" asks for an
 *                  "assignment" event.
 *   share-consume  --topics A,B --group G [--ack accept|release|reject]
 *                  KafkaShareConsumer with explicit acknowledgement; acknowledges each record and
 *                  commits after each poll, until "stop"/EOF/--duration. Out: "record"s (with
 *                  delivery_count), "acknowledged" per commit.
 *   group-offsets  --group G
 *                  Admin.listConsumerGroupOffsets: one "offset" event per partition the group
 *                  committed (topic, partition, offset, metadata), then "done".
 * Common: --bootstrap HOST:PORT, --config k=v (repeatable, any client property), --timeout S.
 */
public final class JavaPeer {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static final String STOP = "\u0000stop";
    private static final String EOF = "\u0000eof";
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration CLOSE = Duration.ofSeconds(10);
    /** The group member's consumer while it polls: stdin "wakeup" calls its wakeup(). */
    private volatile KafkaConsumer<byte[], byte[]> wakeable;

    private final Map<String, List<String>> options;
    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final long deadline;

    private JavaPeer(Map<String, List<String>> options) {
        this.options = options;
        double seconds = Double.parseDouble(option("duration", "0"));
        this.deadline = seconds > 0 ? System.nanoTime() + (long) (seconds * 1e9) : Long.MAX_VALUE;
    }

    // -- output ------------------------------------------------------------------------------

    private static synchronized void emit(ObjectNode event) {
        try {
            OUT.println(JSON.writeValueAsString(event));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode event(String kind) {
        ObjectNode node = JSON.createObjectNode();
        node.put("event", kind);
        return node;
    }

    private static String b64(byte[] bytes) {
        return bytes == null ? null : Base64.getEncoder().encodeToString(bytes);
    }

    private static byte[] unb64(JsonNode node) {
        return node == null || node.isNull() ? null : Base64.getDecoder().decode(node.asText());
    }

    private static ArrayNode partitions(Collection<TopicPartition> tps) {
        ArrayNode out = JSON.createArrayNode();
        List<TopicPartition> sorted = new ArrayList<>(tps);
        sorted.sort((a, b) -> a.topic().equals(b.topic())
            ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        for (TopicPartition tp : sorted) out.addArray().add(tp.topic()).add(tp.partition());
        return out;
    }

    private static ObjectNode record(ConsumerRecord<byte[], byte[]> r) {
        ObjectNode node = event("record");
        node.put("topic", r.topic());
        node.put("partition", r.partition());
        node.put("offset", r.offset());
        node.put("timestamp", r.timestamp());
        node.put("timestamp_type", r.timestampType().name);
        node.put("key", b64(r.key()));
        node.put("value", b64(r.value()));
        ArrayNode headers = node.putArray("headers");
        for (Header h : r.headers()) headers.addArray().add(h.key()).add(b64(h.value()));
        r.leaderEpoch().ifPresent(epoch -> node.put("leader_epoch", epoch));
        r.deliveryCount().ifPresent(count -> node.put("delivery_count", count.intValue()));
        return node;
    }

    // -- options -----------------------------------------------------------------------------

    private String option(String name, String fallback) {
        List<String> values = options.get(name);
        return values == null ? fallback : values.get(values.size() - 1);
    }

    private String required(String name) {
        String value = option(name, null);
        if (value == null) throw new IllegalArgumentException("--" + name + " is required");
        return value;
    }

    private List<String> topics() {
        return Arrays.asList(required("topics").split(","));
    }

    private Properties properties() {
        Properties props = new Properties();
        props.put("bootstrap.servers", required("bootstrap"));
        props.put("client.id", "java-peer-" + ProcessHandle.current().pid());
        for (String entry : options.getOrDefault("config", List.of())) {
            int eq = entry.indexOf('=');
            props.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        return props;
    }

    private Properties consumerProperties() {
        Properties props = properties();
        props.putIfAbsent("key.deserializer", ByteArrayDeserializer.class.getName());
        props.putIfAbsent("value.deserializer", ByteArrayDeserializer.class.getName());
        props.putIfAbsent("fetch.max.wait.ms", "100");
        return props;
    }

    private boolean running() {
        return System.nanoTime() < deadline;
    }

    /** A pending stdin command, if any; STOP for "stop", and for stdin closed unless `eofStops` is false
     * (a role that ends by itself keeps going when nobody writes to it). */
    private String command(boolean eofStops) {
        String command = commands.poll();
        if (EOF.equals(command)) return eofStops ? STOP : null;
        return command;
    }

    // -- produce -----------------------------------------------------------------------------

    private KafkaProducer<byte[], byte[]> producer(String codec, String transactionalId) {
        Properties props = properties();
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        props.put("compression.type", codec);
        props.putIfAbsent("linger.ms", "5");
        props.putIfAbsent("max.block.ms", "30000");
        props.putIfAbsent("enable.idempotence", option("idempotent", "true"));
        if (transactionalId != null) props.put("transactional.id", transactionalId);
        return new KafkaProducer<>(props);
    }

    private void produce() throws Exception {
        String defaultTopic = option("topic", null);
        String defaultCodec = option("codec", "none");
        String transactionalId = option("transactional-id", null);
        Map<String, KafkaProducer<byte[], byte[]>> producers = new LinkedHashMap<>();
        int index = 0;
        int[] failures = {0};
        try {
            if (transactionalId != null) {
                producers.put(defaultCodec, producer(defaultCodec, transactionalId));
                producers.get(defaultCodec).initTransactions();
            }
            String line;
            while (!(line = commands.take()).equals(STOP) && !line.equals(EOF)) {
                if (line.isBlank()) continue;
                JsonNode input = JSON.readTree(line);
                if (input.has("op")) {
                    operation(input.get("op").asText(), producers);
                    continue;
                }
                String codec = input.hasNonNull("codec") ? input.get("codec").asText() : defaultCodec;
                if (transactionalId != null && !codec.equals(defaultCodec)) {
                    throw new IllegalArgumentException("a transactional peer writes --codec only");
                }
                KafkaProducer<byte[], byte[]> producer =
                    producers.computeIfAbsent(codec, c -> producer(c, null));
                List<Header> headers = new ArrayList<>();
                for (JsonNode h : input.path("headers")) {
                    headers.add(new RecordHeader(h.get(0).asText(), unb64(h.get(1))));
                }
                Integer partition = input.hasNonNull("partition") ? input.get("partition").asInt() : null;
                Long timestamp = input.hasNonNull("timestamp") ? input.get("timestamp").asLong() : null;
                String topic = input.hasNonNull("topic") ? input.get("topic").asText() : defaultTopic;
                if (topic == null) throw new IllegalArgumentException("a record without a topic (--topic)");
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                    topic, partition, timestamp, unb64(input.get("key")), unb64(input.get("value")), headers);
                final int i = index++;
                producer.send(record, (meta, error) -> sent(i, meta, error, failures));
            }
            for (KafkaProducer<byte[], byte[]> producer : producers.values()) producer.flush();
        } finally {
            for (KafkaProducer<byte[], byte[]> producer : producers.values()) producer.close(CLOSE);
        }
        ObjectNode done = event("done");
        done.put("count", index);
        done.put("failed", failures[0]);
        emit(done);
    }

    private static void sent(int index, RecordMetadata meta, Exception error, int[] failures) {
        ObjectNode out = event(error == null ? "sent" : "send-failed");
        out.put("index", index);
        if (error != null) {
            synchronized (failures) {
                failures[0]++;
            }
            out.put("error", error.getClass().getSimpleName());
            out.put("message", String.valueOf(error.getMessage()));
        } else {
            out.put("topic", meta.topic());
            out.put("partition", meta.partition());
            out.put("offset", meta.offset());
            out.put("timestamp", meta.timestamp());
        }
        emit(out);
    }

    private static void operation(String op, Map<String, KafkaProducer<byte[], byte[]>> producers) {
        for (KafkaProducer<byte[], byte[]> producer : producers.values()) {
            switch (op) {
                case "begin": producer.beginTransaction(); break;
                case "commit": producer.commitTransaction(); break;
                case "abort": producer.flush(); producer.abortTransaction(); break;
                case "flush": producer.flush(); break;
                default: throw new IllegalArgumentException("unknown op " + op);
            }
        }
        String[] past = {"begun", "committed", "aborted", "flushed"};
        emit(event(past[List.of("begin", "commit", "abort", "flush").indexOf(op)]));
    }

    // -- consume -----------------------------------------------------------------------------

    private void groupOffsets() throws Exception {
        try (Admin admin = Admin.create(properties())) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin
                .listConsumerGroupOffsets(required("group"))
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : offsets.entrySet()) {
                ObjectNode out = event("offset");
                out.put("topic", entry.getKey().topic());
                out.put("partition", entry.getKey().partition());
                out.put("offset", entry.getValue().offset());
                out.put("metadata", entry.getValue().metadata());
                emit(out);
            }
        }
        emit(event("done"));
    }

    private void consume() {
        Properties props = consumerProperties();
        String group = option("group", null);
        props.put("isolation.level", option("isolation", "read_uncommitted"));
        props.put("enable.auto.commit", "false");
        props.putIfAbsent("auto.offset.reset", "earliest");
        if (group != null) props.put("group.id", group);
        long count = Long.parseLong(option("count", "-1"));
        long idleNanos = (long) (Double.parseDouble(option("idle", "15")) * 1e9);
        long seen = 0;
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        try {
            Map<TopicPartition, Long> ends = null;
            if (group != null) {
                consumer.subscribe(topics());
            } else {
                List<TopicPartition> all = new ArrayList<>();
                for (String topic : topics()) {
                    for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(20))) {
                        all.add(new TopicPartition(topic, p.partition()));
                    }
                }
                consumer.assign(all);
                consumer.seekToBeginning(all);
                if (count < 0) ends = consumer.endOffsets(all, Duration.ofSeconds(20));
            }
            long lastRecord = System.nanoTime();
            while (running() && !STOP.equals(command(false))) {
                if (count >= 0 && seen >= count) break;
                if (ends != null && reachedEnd(consumer, ends)) break;
                if (System.nanoTime() - lastRecord > idleNanos) break;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    emit(record(r));
                    seen++;
                    lastRecord = System.nanoTime();
                }
                if (group != null && seen > 0) consumer.commitSync(Duration.ofSeconds(10));
            }
        } finally {
            consumer.close(CloseOptions.timeout(CLOSE));
        }
        ObjectNode done = event("done");
        done.put("count", seen);
        emit(done);
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (consumer.position(end.getKey(), Duration.ofSeconds(10)) < end.getValue()) return false;
        }
        return true;
    }

    // -- group-member ------------------------------------------------------------------------

    private static String strategyClass(String name) {
        switch (name) {
            case "range": return "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin": return "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            case "sticky": return "org.apache.kafka.clients.consumer.StickyAssignor";
            case "cooperative-sticky": return "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            default: return name;
        }
    }

    /** --close default|leave_group|remain_in_group: KIP-1092's group membership operation. */
    private CloseOptions closeOptions() {
        String operation = option("close", "default").toUpperCase(java.util.Locale.ROOT);
        return CloseOptions.groupMembershipOperation(
            CloseOptions.GroupMembershipOperation.valueOf(operation)).withTimeout(CLOSE);
    }

    private void groupMember() {
        Properties props = consumerProperties();
        props.put("group.id", required("group"));
        props.put("enable.auto.commit", "false");
        props.putIfAbsent("auto.offset.reset", "earliest");
        String protocol = option("protocol", "classic");
        props.put("group.protocol", protocol);
        if (protocol.equals("classic")) {
            props.put("partition.assignment.strategy", strategyClass(option("strategy", "range")));
            props.putIfAbsent("session.timeout.ms", "6000");
            props.putIfAbsent("heartbeat.interval.ms", "500");
        }
        Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
        long seen = 0;
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        try {
            consumer.subscribe(topics(), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    Map<TopicPartition, OffsetAndMetadata> due = new HashMap<>();
                    for (TopicPartition tp : revoked) {
                        OffsetAndMetadata offset = pending.remove(tp);
                        if (offset != null) due.put(tp, offset);
                    }
                    if (!due.isEmpty()) consumer.commitSync(due, Duration.ofSeconds(10));
                    emitAssignment("revoked", revoked, consumer.assignment());
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                    emitAssignment("assigned", assigned, consumer.assignment());
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> lost) {
                    pending.keySet().removeAll(lost);
                    emitAssignment("lost", lost, consumer.assignment());
                }
            });
            wakeable = consumer;
            String command;
            while (running() && !STOP.equals(command = command(true))) {
                if ("assignment".equals(command)) {
                    emitAssignment("assignment", consumer.assignment(), consumer.assignment());
                }
                ConsumerRecords<byte[], byte[]> polled;
                try {
                    polled = consumer.poll(POLL);
                } catch (WakeupException e) {
                    emit(event("woken"));
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    emit(record(r));
                    seen++;
                    pending.put(new TopicPartition(r.topic(), r.partition()),
                        new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));
                }
                commitPending(consumer, pending);
            }
            commitPending(consumer, pending);
        } finally {
            wakeable = null;
            consumer.close(closeOptions());
        }
        ObjectNode done = event("done");
        done.put("count", seen);
        done.put("uncommitted", pending.size());
        emit(done);
    }

    /** Commits what was processed; a commit refused during a rebalance is retried after the next
     * poll (or in onPartitionsRevoked, before the partitions go). */
    private static void commitPending(KafkaConsumer<byte[], byte[]> consumer,
                                      Map<TopicPartition, OffsetAndMetadata> pending) {
        if (pending.isEmpty()) return;
        Map<TopicPartition, OffsetAndMetadata> due = new HashMap<>(pending);
        try {
            consumer.commitSync(due, Duration.ofSeconds(10));
            pending.entrySet().removeIf(e -> e.getValue().equals(due.get(e.getKey())));
        } catch (RebalanceInProgressException | RetriableCommitFailedException e) {
            ObjectNode out = event("commit-deferred");
            out.put("error", e.getClass().getSimpleName());
            emit(out);
        }
    }

    private static void emitAssignment(String kind, Collection<TopicPartition> delta,
                                       Set<TopicPartition> whole) {
        ObjectNode out = event(kind);
        out.set("partitions", partitions(delta));
        out.set("assignment", partitions(whole));
        emit(out);
    }

    // -- share-consume -----------------------------------------------------------------------

    private void shareConsume() {
        Properties props = consumerProperties();
        props.put("group.id", required("group"));
        props.put("share.acknowledgement.mode", "explicit");
        AcknowledgeType type = AcknowledgeType.valueOf(option("ack", "accept").toUpperCase());
        long seen = 0;
        KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props);
        try {
            consumer.subscribe(topics());
            while (running() && !STOP.equals(command(true))) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    emit(record(r));
                    consumer.acknowledge(r, type);
                    seen++;
                }
                if (records.isEmpty()) continue;
                Map<TopicIdPartition, Optional<KafkaException>> results =
                    consumer.commitSync(Duration.ofSeconds(10));
                ObjectNode out = event("acknowledged");
                out.put("count", records.count());
                ObjectNode errors = out.putObject("errors");
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                    e.getValue().ifPresent(error -> errors.put(
                        e.getKey().topic() + "#" + e.getKey().partition(), error.getClass().getSimpleName()));
                }
                emit(out);
            }
        } finally {
            consumer.close(CLOSE);
        }
        ObjectNode done = event("done");
        done.put("count", seen);
        emit(done);
    }

    // -- main --------------------------------------------------------------------------------

    private void readCommands() {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    String trimmed = line.trim();
                    KafkaConsumer<byte[], byte[]> polling = wakeable;
                    if (trimmed.equals("wakeup") && polling != null) {
                        polling.wakeup();  // from this thread, as a shutdown hook would
                        continue;
                    }
                    commands.add(trimmed.equals("stop") ? STOP : trimmed);
                }
            } catch (Exception ignored) {
                // stdin gone: same as closed
            }
            commands.add(EOF);
        }, "stdin");
        reader.setDaemon(true);
        reader.start();
    }

    private static void watchdog(double seconds) {
        Thread dog = new Thread(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep((long) (seconds * 1000));
            } catch (InterruptedException e) {
                return;
            }
            ObjectNode out = event("error");
            out.put("error", "Timeout");
            out.put("message", "still running after --timeout " + seconds + " s");
            emit(out);
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        dog.setDaemon(true);
        dog.start();
    }

    private static Map<String, List<String>> parse(String[] args, int from) {
        Map<String, List<String>> out = new TreeMap<>();
        for (int i = from; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value, got " + args[i]);
            }
            out.computeIfAbsent(args[i].substring(2), k -> new ArrayList<>()).add(args[++i]);
        }
        return out;
    }

    public static void main(String[] args) {
        int status = 0;
        System.setOut(System.err); // the client's log lines (log4j's console) stay off the events
        try {
            if (args.length == 0) throw new IllegalArgumentException("usage: JavaPeer SUBCOMMAND --name value ...");
            JavaPeer peer = new JavaPeer(parse(args, 1));
            watchdog(Double.parseDouble(peer.option("timeout", "120")));
            peer.readCommands();
            ObjectNode started = event("started");
            started.put("role", args[0]);
            emit(started);
            switch (args[0]) {
                case "produce": peer.produce(); break;
                case "consume": peer.consume(); break;
                case "group-member": peer.groupMember(); break;
                case "share-consume": peer.shareConsume(); break;
                case "group-offsets": peer.groupOffsets(); break;
                default: throw new IllegalArgumentException("unknown subcommand " + args[0]);
            }
        } catch (Throwable e) {
            ObjectNode out = event("error");
            out.put("error", e.getClass().getSimpleName());
            out.put("message", String.valueOf(e.getMessage()));
            emit(out);
            status = 2;
        }
        OUT.flush();
        Runtime.getRuntime().halt(status);
    }
}
