package org.apache.kafka.common.protocol;
public interface Writable { void writeByte(byte val); void writeByteArray(byte[] arr); void writeUnsignedVarint(int i); }
